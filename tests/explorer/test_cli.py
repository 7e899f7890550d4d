import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import compiler
from explorer.cli import UNAVAILABLE, main
from explorer.examples import build_broken, spmv_trace
from explorer.session import explore


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "spmv.json"
    path.write_text(spmv_trace().to_json())
    return path


def test_trace_text_and_html(saved, tmp_path, capsys):
    assert main(["trace", str(saved), "--text"]) == 0
    out = capsys.readouterr().out
    assert "== step 0: parse" in out and "== step 3: emit-c" in out
    html = tmp_path / "out.html"
    assert main(["trace", str(saved), "--html", str(html)]) == 0
    assert html.read_text().count('<section class="step"') == 5


def test_trace_of_failed_build_exits_1(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text(explore(build_broken).trace.to_json())
    assert main(["trace", str(path)]) == 1
    assert "!! FormatError" in capsys.readouterr().out


def test_show_artifact_dot_text_and_program(saved, capsys):
    assert main(["show", str(saved), "--step", "1", "--artifact", "fiber-tree", "--dot"]) == 0
    assert capsys.readouterr().out.startswith('digraph "A"')
    assert main(["show", str(saved), "--step", "3", "--artifact", "c"]) == 0
    assert "#include" in capsys.readouterr().out
    assert main(["show", str(saved), "--step", "0"]) == 0
    assert capsys.readouterr().out.strip() == "y[i] = sum[j](A[i, j] * x[j])"
    assert main(["show", str(saved), "--step", "1", "--artifact", "lattice"]) == 2
    assert "has no 'lattice' artifact" in capsys.readouterr().err
    assert main(["show", str(saved), "--step", "3", "--artifact", "c", "--dot"]) == 2
    assert "no DOT drawing" in capsys.readouterr().err
    assert main(["show", str(saved), "--step", "99"]) == 2
    assert main(["show", "/nonexistent/t.json"]) == 2


def test_python_dash_m_explorer(saved):
    r = subprocess.run([sys.executable, "-m", "explorer", "show", str(saved), "--step", "1",
                        "--artifact", "fiber-tree"], capture_output=True, text=True, check=True)
    assert r.stdout.startswith("A: Dense(SparseList")


def test_lower_without_strategies_says_so(monkeypatch, capsys):
    monkeypatch.delattr(compiler, "lower", raising=False)
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--format", "A=csr"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: {UNAVAILABLE}"
    assert "not available yet" in err


class FakeKernel:
    def __init__(self, expr, trace, tensors):
        self.expr, self.trace, self.tensors = expr, trace, tensors
        self.c_source = trace.find("emit-c")[0].artifact("c").text
        self.calls = 0

    def __call__(self, **tensors):
        self.calls += 1
        return compiler.evaluate(self.expr, **tensors)[0]


@pytest.fixture
def fake_lower(monkeypatch):
    """A stand-in for compiler.lower: parse, a lattice step, then the real emit-c/compile."""
    from compiler.imperative.examples import csr_spmv

    made = []

    def lower(program, strategy="lattice", **tensors):
        t = compiler.Trace()
        compiler.parse(program, trace=t)
        t.record("lattice", artifacts=[compiler.Artifact("lattice", "L_i", "i: A", dot="digraph { p0 }")])
        compiler.compile_function(csr_spmv(), trace=t)
        k = FakeKernel(program, t, tensors)
        k.strategy = strategy
        made.append(k)
        return k

    monkeypatch.setattr(compiler, "lower", lower, raising=False)
    return made


def test_lower_prints_c_json_dot(fake_lower, capsys, tmp_path):
    expr = "y[i] = A[i, j] * x[j]"
    assert main(["lower", expr, "--format", "A=csr", "--format", "x=dense", "--strategy", "looplets"]) == 0
    assert "#include" in capsys.readouterr().out
    k = fake_lower[-1]
    assert k.strategy == "looplets" and k.tensors == {"A": "csr", "x": "dense"}
    assert main(["lower", expr, "--json"]) == 0
    assert compiler.Trace.from_json(capsys.readouterr().out).stages()[0] == "parse"
    assert main(["lower", expr, "--dot", "lattice"]) == 0
    assert capsys.readouterr().out.strip() == "digraph { p0 }"
    assert main(["lower", expr, "--dot", "looplet-nest"]) == 2
    assert "no 'looplet-nest' artifact" in capsys.readouterr().err
    assert main(["lower", expr, "--html", str(tmp_path / "k.html")]) == 0
    assert (tmp_path / "k.html").exists()
    assert main(["lower", expr, "--format", "A"]) == 2


def test_lower_matrix_market_with_timing(fake_lower, capsys, tmp_path):
    m = sp.random(30, 20, density=0.2, format="coo", random_state=3)
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(str(path), m)
    expr = "y[i] = A[i, j] * x[j]"
    assert main(["lower", expr, "--format", "A=csr", "--mtx", f"A={path}", "--time", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    k = fake_lower[-1]
    A, x = k.tensors["A"], k.tensors["x"]
    assert A.shape == (30, 20) and A.format.shorthand == "csr" and x.shape == (20,)
    assert np.allclose(A.to_numpy(), m.toarray())
    assert k.calls > 2 and "median" in out and "numpy (reference)" in out
    assert main(["lower", expr, "--time"]) == 2
    assert "--time needs inputs" in capsys.readouterr().err
    assert main(["lower", "y[i] = A[i, j] * z[k]", "--mtx", f"A={path}"]) == 2
    assert "cannot size tensor z: index k" in capsys.readouterr().err
    assert main(["lower", expr, "--mtx", f"A={tmp_path / 'nope.mtx'}"]) == 2


def test_failed_lowering_writes_the_partial_trace(monkeypatch, capsys, tmp_path):
    def lower(program, strategy="lattice", **tensors):
        t = compiler.Trace()
        compiler.parse(program, trace=t)
        t.record("concretize", note="reached")
        err = compiler.StrategyError("the lattice strategy cannot iterate A (RunList)")
        err.trace = t
        raise err

    monkeypatch.setattr(compiler, "lower", lower, raising=False)
    out = tmp_path / "failed.html"
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--html", str(out)]) == 1
    err = capsys.readouterr().err
    assert "lowering failed (lattice): StrategyError" in err and "3 steps" in err
    page = out.read_text()
    assert page.count('<section class="step"') == 3 and "cannot iterate A" in page


def test_a_module_named_lower_is_not_a_strategy(monkeypatch, capsys):
    import types

    monkeypatch.setattr(compiler, "lower", types.ModuleType("compiler.lower"), raising=False)
    assert main(["lower", "y[i] = x[i]"]) == 2
    assert "not available yet" in capsys.readouterr().err


@pytest.mark.parametrize("body, message", [
    ("coordinate integer general\n2 2 1\n1 1 99999999999999999999", "cannot read Matrix Market file .* for "
                                                                      "tensor A: Line 3: Integer out of range"),
    ("coordinate real general\n100000000000 100000000000 1\n1 1 1.0", "for tensor A: (A: level 1 \\(SparseList\\) of csr "
                                                                       ".* needs .*|Unable to allocate .*); "
                                                                       "--format A=dcsr stores only the rows"),
])
def test_a_matrix_market_file_the_compiler_cannot_take_is_one_line(body, message, capsys, tmp_path):
    path = tmp_path / "A.mtx"
    path.write_text(f"%%MatrixMarket matrix {body}\n")
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--mtx", f"A={path}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and re.search(message, err)


def test_a_complex_matrix_market_file_lowers_to_double_complex_and_agrees_with_scipy(capsys, tmp_path):
    path = tmp_path / "A.mtx"
    path.write_text("%%MatrixMarket matrix coordinate complex general\n2 2 2\n1 1 1.0 2.0\n2 1 -3.0 0.5\n")
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--mtx", f"A={path}", "--time", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "const double _Complex *restrict A_val" in out and "check scipy (A @ x): agrees" in out


@pytest.mark.parametrize("data, message", [
    ([1, 2, 3], "not a sparsescope trace \\(missing 'format'"),
    ({"format": "sparsescope-trace"}, "'steps' must be a list of steps"),
    ({"format": "sparsescope-trace", "steps": ["x"]}, "step 0 is a str, not a step"),
    ({"format": "sparsescope-trace", "steps": [{"_t": "compiler.trace.Step", "stage": 5}]},
     "step 0 \\(5\\) has a int as its stage, not text"),
    ({"format": "sparsescope-trace", "steps": [{"_t": "compiler.trace.Step", "bogus": 1}]},
     "step 0 cannot be read"),
])
def test_a_damaged_trace_file_is_one_line(data, message, capsys, tmp_path):
    import json
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    assert main(["trace", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err), err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert main(["trace", str(deep)]) == 2
    assert "nests too deeply" in capsys.readouterr().err


def test_a_format_can_be_given_as_its_printed_spec(capsys):
    spec = "A=SparseList(SparseByteMap(Element(0.0)))"
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--format", spec, "--format", "x=dense", "--c"]) == 0
    assert "A1_srt" in capsys.readouterr().out   # (the byte map's sorted coordinates are iterated)
    assert main(["lower", "y[i] = A[i, j] * x[j]", "--format", "A=SparseList(Bytes(Element(0.0)))",
                 "--format", "x=dense"]) == 1   # (the lowering fails: its trace ends at the error)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Bytes(...) is not a level format" in err, err


def _table_rows(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(k for k, ln in enumerate(lines) if "median" in ln and "vs kernel" in ln)
    return lines[start:start + 1 + sum(1 for ln in lines[start + 1:] if ln.rstrip().endswith("x"))]


@pytest.mark.parametrize("expr, operands, scipy_name", [
    ("y[i] = A[i, j] * x[j]", {"A": (12, 9)}, "scipy (A @ x)"),
    ("C[i, j] = A[i, k] * B[k, j]", {"A": (12, 9), "B": (9, 7)}, "scipy (A @ B)"),
    ("C[i, j] = A[i, j] + B[i, j]", {"A": (12, 9), "B": (12, 9)}, "scipy (A + B)"),
    ("C[i, j] = B[i, j] * A[i, j]", {"A": (12, 9), "B": (12, 9)}, "scipy (B.multiply(A))"),
])
def test_lower_time_compares_with_scipy_in_aligned_columns(expr, operands, scipy_name, capsys, tmp_path):
    """--time compared only with the dense oracle, and a name longer than 16 characters
    ('sparsescope (lattice)') pushed its row out of the header's columns."""
    args = ["lower", expr, "--time", "--repeats", "2"]
    for k, (name, shape) in enumerate(operands.items()):
        path = tmp_path / f"{name}.mtx"
        scipy.io.mmwrite(str(path), sp.random(*shape, density=0.3, format="coo", random_state=k))
        args += ["--mtx", f"{name}={path}", "--format", f"{name}=csr"]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = _table_rows(out)
    names = [ln.split("  ")[0].strip() for ln in rows[1:]]
    assert names == ["sparsescope (lattice)", scipy_name, "numpy (reference)"]
    assert f"check {scipy_name}: agrees" in out and "check numpy (reference): agrees" in out
    # aligned: every row ends where the header ends, and each column's right edge is the header's
    assert len({len(ln) for ln in rows}) == 1
    median_end = rows[0].index("median") + len("median")
    assert all(ln[median_end - 1] != " " and ln[median_end] == " " for ln in rows[1:])


def test_lower_time_without_a_scipy_operation_keeps_the_oracle(capsys, tmp_path):
    path = tmp_path / "A.mtx"
    scipy.io.mmwrite(str(path), sp.random(8, 6, density=0.3, format="coo", random_state=0))
    assert main(["lower", "y[i] = A[i, j] * A[i, j]", "--mtx", f"A={path}", "--time", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "scipy" not in out and "check numpy (reference): agrees" in out
