"""The lattice strategy compiles shape operators to C (issue 30 item 3): each kernel of the paper's
families against the dense oracle (compiler.evaluate), the sequence CFIR's interpreter
(seq_evaluate) and the IR interpreter, by example and over random shape-operator programs; the
trace's stages; the refusals, which name looplets."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import evaluate
from compiler.backend.build import compiler_command, is_gcc
from compiler.errors import ShapeError, StrategyError
from compiler.format import Format, coo
from compiler.imperative.ir import Grow
from compiler.imperative.traverse import walk as ir_walk
from compiler.lattice.seqderive import seq_evaluate
from compiler.tensor import Tensor
from compiler.trace import Trace

sys.path.insert(0, str(Path(__file__).parent))
from shape_cases import SHAPE_CASES  # noqa: E402
from test_seqderive import BOTH_WAYS, LAYER_LIMITS, programs, rand  # noqa: E402

FORMATS = ("csr", "coo", "dense")


def as_format(a, fmt):
    if a.ndim == 1:
        return Tensor.from_numpy(a, "dense" if fmt == "dense" else "sparse")
    if a.ndim == 3:
        return Tensor.from_numpy(a, {"csr": "csf", "dcsr": "csf"}.get(fmt, fmt))
    return Tensor.from_numpy(a, fmt)


def run_all(program, tensors, checked=False, out=None):
    """The compiled kernel's result (into ``out``, a format), after checking it against the IR
    interpreter's and the CFIR interpreter's (a sparse output: its structure too)."""
    given = {} if out is None else {program.split("[")[0]: out}
    k = ss.lower(program, strategy="lattice", checked=checked, **tensors, **given)
    result = k(**tensors)
    result.validate()
    got = result.to_numpy()
    assert np.array_equal(k.interpret(**tensors).to_numpy(), got, equal_nan=True), program
    # (the loops run in the output's mode order, or the one a loop-order step gave: the output's loops
    # reordered, or a sum's among them)
    chosen = k.trace.find("loop-order")
    data = chosen[-1].data if chosen else {}
    order = data.get("order", k.formats[program.split("[")[0]].mode_order)
    assert np.array_equal(seq_evaluate(program, loop_order=order, hoisted=data.get("hoisted"), **tensors), got,
                          equal_nan=True), (program, k.c_source)
    return got


OUTPUTS = {0: (None,), 1: (None, "sparse"), 2: (None, "csr", "coo"), 3: (None,)}


def check(program, seed=0, trials=4, formats=FORMATS, **shapes):
    """``program`` on every format of each input, into a dense and each sparse output it can append;
    the bounds-checked build on the full inputs (trial 2), where the first trial's hold no entry, for
    the first assignment of formats (each checked build is a kernel of its own: one per output
    keeps this file's GCC time in the suite's budget; the sanitized run checks every format's reads)."""
    rng = np.random.default_rng(seed)
    for t in range(trials):
        arrays = {n: rand(rng, s, [0.0, 0.3, 1.0][t % 3] if t < 3 else 0.5) for n, s in shapes.items()}
        want = evaluate(program, **arrays)[0]
        for k in range(len(formats)):
            tensors = {n: as_format(a, formats[(k + m) % len(formats)]) for m, (n, a) in enumerate(arrays.items())}
            for out in OUTPUTS[want.ndim]:
                got = run_all(program, tensors, checked=(t == min(2, trials - 1) and k == 0), out=out)
                assert np.array_equal(got, want), (program, out, {n: x.format for n, x in tensors.items()})


# -- the kernels of the paper's families -------------------------------------------------------------


@pytest.mark.parametrize("program, seed, shapes", SHAPE_CASES, ids=[p for p, _, _ in SHAPE_CASES])
def test_each_shape_operator(program, seed, shapes):
    """A collapse, a split, stacks and strided slices (shape_cases; the sequence interpreter is checked on them too)."""
    check(program, seed=seed, **shapes)


def test_collapse_of_csr_and_coo_into_a_vector():
    check("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", seed=2, A=(4, 3), b=(12,))
    check("y[n] = collapse(collapse(A[i, j, k], (i, j) -> m), (m, k) -> n)", seed=3, A=(2, 3, 2))


def test_split_of_a_vector_into_a_matrix():
    check("C[i, j] = split(b[k], k -> (i, j)) * B[i, j]", seed=4, b=(12,), B=(3, 4))


def test_strided_slices():
    check("Y[i, m, k] = slice(A[i, j, k], j -> m, (1, 5, 2))", seed=9, A=(2, 6, 3))


def test_slices_with_negative_steps():
    # the sliced levels are walked from their ends (a CSR's row positions backwards, a COO's
    # segments), so the output, appended in loop order, is sorted
    check("C[k, i] = slice(A[j, i], j -> k, (5, -1, -2))", A=(6, 3))
    check("C[i, k] = slice(A[i, j], j -> k, (4, 0, -1))", seed=1, A=(3, 5))
    check("C[k, l] = slice(slice(A[j, i], j -> k, (4, 1, -1)), i -> l, (3, -1, -2))", seed=2, A=(5, 4))
    check("C[k, i] = slice(A[j, i], j -> k, (6, 0, -3)) * B[k, i]", seed=3, A=(7, 3), B=(2, 3))
    check("C[k, i] = slice(A[j, i], j -> k, (5, -1, -2)) + B[k, i]", seed=4, A=(6, 3), B=(3, 3))
    check("c[m] = collapse(slice(A[j, i], j -> k, (3, -1, -1)), (k, i) -> m) * b[m]", seed=5, A=(4, 3), b=(12,))
    check("y[k] = sum[l](slice(slice(A[j, i], j -> k, (4, 1, -1)), i -> l, (3, -1, -1)) "
          "* slice(x[i], i -> l, (3, -1, -1)))", seed=6, A=(5, 4), x=(4,))
    check("c[k] = slice(a[i], i -> k, (7, -1, -1)) * b[k]", seed=7, a=(8,), b=(8,))
    check("Y[i, m, k] = slice(A[i, j, k], j -> m, (5, 0, -2))", seed=8, A=(2, 6, 3))
    check("C[k, i] = slice(concat((A[j, i], B[l, i]), (j, l) -> m), m -> k, (4, -1, -1))", seed=9, A=(2, 3), B=(3, 3))


def test_a_backward_slice_locates_its_start_from_the_end():
    # a long fiber sliced from near its end: the start is found by galloping down, not a scan
    a = np.zeros(200)
    a[[3, 50, 120, 150, 151, 190]] = [1.0, 2, 3, 4, 5, 6]
    for fmt in ("sparse", "coo"):
        A = Tensor.from_numpy(a[None, :], "csr" if fmt == "sparse" else "coo")
        got = run_all("C[i, k] = slice(A[i, j], j -> k, (151, 2, -3))", {"A": A}, out="csr")
        assert np.array_equal(got, a[None, 151:2:-3]), fmt
    k = ss.lower("C[i, k] = slice(A[i, j], j -> k, (151, 2, -3))", strategy="lattice",
                 A=Tensor.from_numpy(a[None, :], "csr"))
    assert re.search(r" = seek_back_int(32|64)\(", k.c_source)   # (the helper galloping down, called)
    # a COO's first mode (rows, in segments) gallops down too (it stepped a segment at a time)
    rows = np.zeros((151, 2))
    rows[[0, 1, 99, 140, 149], :] = [[1.0, 2], [3, 0], [0, 4], [5, 6], [7, 8]]
    for program, arr, want in [("C[k, i] = slice(A[j, i], j -> k, (151, 2, -3))", a[:, None], a[151:2:-3, None]),
                               # (intersected with B's few stored rows: located at each)
                               ("C[k, i] = slice(A[j, i], j -> k, (150, -1, -1)) * B[k, i]",
                                np.stack([a, a[::-1]], axis=1), np.stack([a, a[::-1]], axis=1)[150::-1] * rows)]:
        tensors = {"A": Tensor.from_numpy(arr, "coo")}
        if "B[" in program:
            tensors["B"] = Tensor.from_numpy(rows, "dcsr")
        for out in ("csr", "coo", "dense"):
            np.testing.assert_array_equal(run_all(program, tensors, out=out), want)
        k = ss.lower(program, strategy="lattice", **tensors)
        assert re.search(r" = seek_back_int(32|64)\(", k.c_source), k.c_source
        np.testing.assert_array_equal(k(**tensors).to_numpy(), want)


def test_constant_indices():
    # a constant is a length-1 slice of its level in a product with a neighbouring index's level
    check("y[j] = A[1, j]", A=(3, 4), formats=FORMATS + ("csc",))
    check("y[i] = A[i, 3] * b[i]", seed=1, A=(3, 4), b=(3,), formats=FORMATS + ("csc",))
    check("y[j] = A[2, j] + A[0, j]", seed=2, A=(3, 4))
    check("Y[i, k] = A[i, 2, k]", seed=3, A=(3, 4, 2), formats=("coo", "dense", "csf"))
    check("y[k] = A[0, 3, k] + A[2, 1, k]", seed=4, A=(3, 4, 2), formats=("coo", "dense", "csf"))
    check("y[i] = sum[j](A[i, j, 1] * x[j])", seed=5, A=(3, 4, 2), x=(4,), formats=("coo", "dense", "csf"))
    check("y[k] = slice(A[1, j], j -> k, (4, -1, -2))", seed=6, A=(3, 5), formats=FORMATS + ("csc",))
    check("c[m] = collapse(A[i, 2, k], (i, k) -> m)", seed=7, A=(3, 4, 2), formats=("coo", "dense", "csf"))


#: the storage formats of a 2-D and a 3-D tensor the index property takes (CSC's rows are inner)
INDEX_FORMATS = {2: ("csr", "csc", "coo", "dense", "dcsr"), 3: ("coo", "dense", "csf")}


@st.composite
def indexings(draw):
    """A 2-D or 3-D tensor's shape, format and fill, and per axis an int or a slice (steps negative
    too, empty ones), at least one axis a slice: the lattice computes ``A[key]`` as numpy does."""
    nd = draw(st.sampled_from([2, 3]))
    shape = tuple(draw(st.integers(0 if a else 1, 5)) for a in range(nd))
    key = []
    for n in shape:
        if n and draw(st.integers(0, 2)) == 0:
            key.append(draw(st.integers(0, n - 1)))
        else:
            key.append(slice(draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1)),
                             draw(st.sampled_from([1, 2, -1, -2, -3]))))
    if all(isinstance(k, int) for k in key):
        key[-1] = slice(None, None, -1)
    fmt = draw(st.sampled_from(INDEX_FORMATS[nd]))
    fill = draw(st.sampled_from([0.0, 0.0, 0.0, np.nan, np.inf]))
    return shape, tuple(key), fmt, fill


def indexing_program(shape, key) -> tuple[str, int]:
    """``A[key]`` in index notation (normalized slice bounds), and its result's rank."""
    acc, outs, slices = [], [], []
    for a, (n, k) in enumerate(zip(shape, key)):
        if isinstance(k, int):
            acc.append(str(k))
            continue
        start, stop, step = k.indices(n)
        stop = max(stop, start) if step > 0 else min(stop, start)
        j, o = f"j{a}", f"k{a}"
        acc.append(j)
        outs.append(o)
        slices.append((j, o, start, stop, step))
    expr = f"A[{', '.join(acc)}]"
    for j, o, start, stop, step in slices:
        expr = f"slice({expr}, {j} -> {o}, ({start}, {stop}, {step}))"
    return f"C[{', '.join(outs)}] = {expr}", len(outs)


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(indexings(), st.integers(0, 2 ** 32 - 1))
@example(((1, 0, 1), (0, slice(0, 0, 1), 0), "coo", 0.0), 0)      # one constant twice: not a diagonal
@example(((4, 3), (1, slice(None, None, -1)), "csc", 0.0), 0)        # a constant row of a CSC, reversed
@example(((3, 4, 2), (slice(None, None, -2), 2, slice(None)), "coo", 0.0), 1)
@example(((2, 5), (slice(None), 3), "dcsr", np.nan), 2)               # a NaN fill (once refused)
# (a CSC's rows and columns sliced: a walk of its columns, the output's rows then gathered; once refused)
@example(((1, 0), (slice(0, 0, 1), slice(0, 0, 1)), "csc", 0.0), 0)
@example(((3, 4), (slice(None, None, -1), slice(None, None, 2)), "csc", 0.0), 1)
def test_random_indexing_against_numpy(case, seed):
    """Constant indices at any level and slices with any step, on every format: as numpy indexes,
    into a dense output and a sparse one (of the input's fill, which the copy keeps)."""
    shape, key, fmt, fill = case
    a = rand(np.random.default_rng(seed), shape, 0.5)
    A = as_format(a, fmt) if fill == 0 else Tensor.from_numpy(np.where(a == 0, fill, a), fmt, fill=fill)
    program, rank = indexing_program(shape, key)
    want = A.to_numpy()[key]
    outs = OUTPUTS[rank]
    out = outs[seed % len(outs)]
    if out is not None and fill != 0:
        out = ss.parse_format(out, ndim=rank, fill=fill)
    if fmt == "csc" and rank == 2:
        # (its columns walked first, the loops in the CSC's order: checked by the kernel and the IR's interpreter,
        # run_all's CFIR interpreter taking the output's order)
        k = ss.lower(program, strategy="lattice", A=A, **({} if out is None else {"C": out}))
        result = k(A=A)
        result.validate()
        for got in (result.to_numpy(), k.interpret(A=A).to_numpy()):
            assert np.array_equal(got, want, equal_nan=True), (program, fmt, out)
        return
    got = run_all(program, {"A": A}, out=out)
    assert np.array_equal(got, want, equal_nan=True), (program, fmt, out)


def test_fused_vstack_spmv():
    check("y[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * broadcast(l, x[i]))", seed=10,
          A=(3, 4), B=(2, 4), x=(4,))
    check("y[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * x[i])", seed=11, A=(2, 4), B=(3, 4), x=(4,))


def test_the_vstack_spmv_on_scipy_matrices():
    sp = pytest.importorskip("scipy.sparse")
    A = sp.random(30, 20, density=0.2, format="csr", random_state=1)
    B = sp.random(10, 20, density=0.3, format="csr", random_state=2)
    x = np.arange(20.0)
    p = "y[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * x[i])"
    got = ss.lower(p, strategy="lattice", A=A, B=B, x=x)(A=A, B=B, x=x).to_numpy()
    assert np.allclose(got, sp.vstack([A, B]) @ x)


def test_a_scalar_output():
    # (a 0-d output has no level: found trying it, an IndexError)
    check("s[] = sum[k](collapse(A[i, j], (i, j) -> k))", A=(3, 4))
    check("s[] = sum[l, i](concat((A[j, i], B[k, i]), (j, k) -> l))", seed=12, A=(2, 3), B=(1, 3))


def test_empty_operands_and_extents():
    for fmt in FORMATS:
        z = as_format(np.zeros((3, 4)), fmt)
        assert not run_all("c[k] = collapse(A[i, j], (i, j) -> k)", {"A": z}).any()
        e = as_format(np.zeros((0, 4)), fmt)
        v = as_format(np.ones((2, 4)), fmt)
        got = run_all("C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", {"A": e, "B": v})
        assert np.array_equal(got, np.ones((2, 4)))
        # a slice that keeps nothing
        assert run_all("C[k, i] = slice(A[j, i], j -> k, (2, 2, 1))", {"A": v}).shape == (0, 4)


def test_stored_nan_and_inf_are_copied():
    a = np.array([[np.nan, 0, np.inf], [0, -np.inf, 0]])
    for fmt in FORMATS:
        got = run_all("c[k] = collapse(A[i, j], (i, j) -> k)", {"A": as_format(a, fmt)})
        assert np.array_equal(got, a.ravel(), equal_nan=True)
        got = run_all("C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)",
                      {"A": as_format(a, fmt), "B": as_format(a, fmt)})
        assert np.array_equal(got, np.vstack([a, a]), equal_nan=True)
    # a kernel lowered for finite values is lowered again (for the same shapes) when called on these
    finite = as_format(np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=3.0), "csr")
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", A=finite)
    assert np.array_equal(k(A=as_format(a, "csr")).to_numpy(), a.ravel(), equal_nan=True)
    # ... and where a product's ∩ would skip 0 * inf, its factors' ∪ computes it
    b = np.zeros(6)
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", strategy="lattice", A=finite, b=b)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(k(A=as_format(a, "csr"), b=b).to_numpy(), a.ravel() * b, equal_nan=True)


# -- the trace ------------------------------------------------------------------------------------------


def test_the_trace_records_each_stage():
    A = as_format(rand(np.random.default_rng(0), (3, 4)), "csr")
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", A=A)
    stages = [s.stage for s in k.trace]
    at = stages.index("seq-derive")
    assert stages[at:at + 4] == ["seq-derive", "lattice", "cfir", "lower"]
    assert k.trace[at + 1].artifacts[0].kind == "seq-lattice"
    assert "i_A × j_A" in k.trace[at + 1].artifacts[0].text
    assert k.trace[at].data["loops"] == [["k", "i_A × j_A"]]
    assert k.trace[at].data["operators"][0]["kind"] == "collapse"
    points = k.trace[at + 1].data["points"]
    assert k.trace[at + 1].data["sequence"] == "i_A × j_A" and points[0]["seq"] == "i_A × j_A"
    assert [e["removed"] for e in points[0]["edges"]] == ["i_A"]
    assert k.trace[at + 2].data["loops"] == 1 and k.trace[at + 2].data["after_spans"]   # (and where its parts are)
    lower = k.trace[at + 3]
    assert {k: v for k, v in lower.data.items() if k != "before_spans"} == {"loops": 1, "shapes": {"A": [3, 4]}}
    assert Trace.from_json(k.trace.to_json())[at + 1].data == k.trace[at + 1].data
    assert "pA1 = A1_pos[pA0]" in k.c_source and "A1_idx[pA1]" in k.c_source


def test_a_kernel_serves_only_the_shapes_it_was_lowered_for():
    rng = np.random.default_rng(0)
    A = as_format(rand(rng, (3, 4)), "csr")
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", A=A)
    with pytest.raises(ShapeError, match=r"lowered for shape \(3, 4\)"):
        k(A=as_format(rand(rng, (4, 3)), "csr"))
    # lowered again for the other shape, it is a kernel of its own
    B = as_format(rand(rng, (4, 3)), "csr")
    got = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", strategy="lattice", A=B)(A=B).to_numpy()
    assert np.array_equal(got, B.to_numpy().ravel())


# -- refusals -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("program, tensors, why", [
    ("c[k] = collapse(A[i, j], (i, j) -> k)", {"A": "csr"}, r"tensors of known shapes"),
])
def test_what_the_lattice_cannot_lower_is_refused_naming_looplets(program, tensors, why):
    with pytest.raises(StrategyError, match=why) as e:
        ss.lower(program, strategy="lattice", **tensors)
    assert "strategy='looplets'" in str(e.value)
    # ... which lowers it
    if not any(isinstance(v, str) for v in tensors.values()):
        ss.lower(program, strategy="looplets", **tensors)


# -- random shape-operator programs ---------------------------------------------------------------------


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.lists(st.sampled_from(FORMATS + ("dcsr",)), min_size=12, max_size=12),
       st.integers(0, 2 ** 32 - 1))
@example(("y[i] = sum[j]((M1[i, j] + split(collapse(R2[a3, b4], (a3, b4) -> k5), k5 -> (i, j:1))) * x[j])",
          {"M1": (1, 1), "R2": (1, 1), "x": (1,)}), ["csr", "dense"] * 6, 0)
@example(("C[i, j] = M1[i, j] + split(collapse(R2[a3, b4], (a3, b4) -> k5), k5 -> (i, j:3))",
          {"M1": (2, 3), "R2": (3, 2)}), ["coo", "dense"] * 6, 3)
def test_random_shape_operator_programs_compiled(prog, formats, seed):
    text, shapes = prog
    rng = np.random.default_rng(seed)
    arrays = {n: rand(rng, s, rng.choice([0.0, 0.2, 0.6, 1.0])) for n, s in shapes.items()}
    want = evaluate(text, **arrays)[0]
    tensors = {n: as_format(a, formats[k % len(formats)]) for k, (n, a) in enumerate(arrays.items())}
    outs = OUTPUTS[want.ndim]
    try:
        got = run_all(text, tensors, out=outs[seed % len(outs)])
    except StrategyError as e:
        # (a broadcast operand of a concatenation was refused too: its universes are tied to its part now)
        assert re.search(BOTH_WAYS, str(e)) and ", -" in text, (text, str(e))
        return
    assert np.array_equal(got, want), (text, {n: t.format for n, t in tensors.items()})


@pytest.mark.skipif(not is_gcc(), reason="the warnings checked are GCC's")
@pytest.mark.parametrize("program, shapes", [
    ("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", {"A": (3, 4), "b": (12,)}),
    ("C[i, j] = split(b[k], k -> (i, j)) * B[i, j]", {"b": (12,), "B": (3, 4)}),
    ("C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", {"A": (2, 3), "B": (4, 3)}),
    ("C[k, i] = slice(A[j, i], j -> k, (1, 6, 2)) * B[k, i]", {"A": (7, 3), "B": (3, 3)}),
    ("y[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * x[i])", {"A": (2, 4), "B": (3, 4), "x": (4,)}),
    ("C[k, i] = slice(A[j, i], j -> k, (6, 0, -2)) * B[k, i]", {"A": (7, 3), "B": (3, 3)}),
    ("C[i, k] = slice(A[i, j], j -> k, (4, -1, -3)) + B[i, k]", {"A": (3, 5), "B": (3, 2)}),
    ("y[i] = A[i, 2] + A[1, i]", {"A": (3, 3)}),
    ("C[k, i] = slice(A[j, i], j -> k, (5, 0, -1)) * B[k, i]", {"A": (7, 3), "B": (5, 3)}),   # (a backward locate)
])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_c_compiles_without_warnings(program, shapes, fmt):
    # (as tests/compiler/lattice/test_lattice_c_warnings.py checks the lattice strategy's other kernels)
    tensors = {n: as_format(np.ones(s), fmt) for n, s in shapes.items()}
    k = ss.lower(program, strategy="lattice", **tensors)
    flags = ["-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Wshadow", "-Werror", "-x", "c", "-"]
    run = subprocess.run([*compiler_command(), *flags], input=k.c_source, text=True, capture_output=True)
    assert run.returncode == 0, f"{program}:\n{run.stderr}\n{k.c_source}"


FILL_COPIES = [   # (program, numpy's answer of a and b): copies of entries, the fill kept
    ("C[k, i] = slice(A[j, i], j -> k, (4, -1, -2))", lambda a, b: a[4::-2]),
    ("C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", lambda a, b: np.vstack([a, b])),
    ("C[i, l] = concat((A[i, j], slice(B[i, k], k -> m, (2, -1, -1))), (j, m) -> l)",
     lambda a, b: np.hstack([a, b[:, ::-1]])),
    ("c[k] = collapse(slice(A[j, i], j -> m, (4, -1, -1)), (m, i) -> k)", lambda a, b: a[::-1].ravel()),
    ("y[j] = A[3, j]", lambda a, b: a[3]),
    ("C[i, j] = split(collapse(A[p, q], (p, q) -> k), k -> (i, j:5))", lambda a, b: a.reshape(3, 5)),
]


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(FILL_COPIES), st.sampled_from([1.0, -1.5, np.nan, np.inf, -np.inf]),
       st.sampled_from(FORMATS + ("dcsr",)), st.sampled_from(FORMATS + ("dcsr",)), st.booleans(),
       st.integers(0, 2 ** 32 - 1))
@example(FILL_COPIES[1], np.nan, "csr", "coo", True, 0)
def test_shape_operators_copying_entries_of_one_fill_keep_it(case, fill, fa, fb, sparse_out, seed):
    """A fill other than 0 is exact where the result copies entries of one fill (the lattice walks
    stored entries only): a slice keeps its fill, a concatenation of operands of equal fills has it.
    Each against numpy, the oracle and both interpreters, into a dense output and a sparse one of
    that fill (the lattice strategy refused every fill other than 0)."""
    program, numpy_answer = case
    rng = np.random.default_rng(seed)
    a, b = (np.where(rand(rng, (5, 3), d) == 0, fill, rand(rng, (5, 3), d)) for d in (0.4, 0.7))
    tensors = {"A": Tensor.from_numpy(a, fa, fill=fill), "B": Tensor.from_numpy(b, fb, fill=fill)}
    tensors = {n: t for n, t in tensors.items() if f"{n}[" in program}
    want, want_fill = evaluate(program, **tensors)
    np.testing.assert_array_equal(want, numpy_answer(a, b))
    np.testing.assert_array_equal(want_fill, fill)
    outs = {0: None, 1: "sparse", 2: "csr" if seed % 2 else "coo"}
    out = ss.parse_format(outs[want.ndim], ndim=want.ndim, fill=fill) if sparse_out and want.ndim else None
    np.testing.assert_array_equal(run_all(program, tensors, out=out), want)
    k = ss.lower(program, strategy="lattice", **tensors, **({} if out is None else {program[0]: out}))
    result = k(**tensors)
    np.testing.assert_array_equal(result.fill, fill)
    if out is not None:   # (the fill's entries are not stored)
        stored = result.to_coords()[1]
        assert not np.any(stored == fill), stored


def _fill_operands(program, fills):
    a = np.where(np.eye(5, 3) == 0, fills[0], 2.0)
    tensors = {"A": Tensor.from_numpy(a, "csr", fill=fills[0]),
               "B": Tensor.from_numpy(np.ones((2 if "B[k, i]" in program and "slice" in program else 5, 3)), "coo",
                                      fill=fills[1])}
    return {n: t for n, t in tensors.items() if f"{n}[" in program}


@pytest.mark.parametrize("fills", [(1.0, 0.0), (np.nan, 1.0)])
def test_concatenations_of_two_fills_are_lattice_kernels(fills):
    # (refused before, "a concatenation's operands need one fill"; the second part walks every coordinate,
    # writing its fill where it stores nothing: test_seq_concat_fills.py)
    program = "C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)"
    tensors = _fill_operands(program, fills)
    k = ss.lower(program, **tensors)       # (given no strategy: the lattice's, as it lowers it)
    assert k.strategy == "lattice"
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, **tensors)[0])


def test_a_collapse_of_two_fills_reads_the_part_of_the_other_fill_as_stored():
    # (refused before: a union in a product's right operand; B's part walks every coordinate of its own;
    # then B was read densely, converted; now each part's rows walk their own columns, nested)
    program = "c[m] = collapse(concat((A[j, i], B[k, i]), (j, k) -> l), (l, i) -> m)"
    tensors = _fill_operands(program, (0.0, 1.0))
    k = ss.lower(program, strategy="lattice", **tensors)
    assert k.trace.find("convert") == []
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, **tensors)[0])
    k = ss.lower(program, **tensors)       # (given no strategy: either, weighing that conversion)
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, **tensors)[0])


@pytest.mark.parametrize("program, fills", [
    ("C[k, i] = slice(A[j, i], j -> k, (0, 4, 2)) * B[k, i]", (1.0, 1.0)),
    ("y[j] = A[3, j] + 1.0", (np.nan, 0.0)),
])
def test_operators_of_fills_other_than_0_are_lowered_by_the_lattice(program, fills):
    # (an absent operand reads its fill; before, refused: "computes with them")
    tensors = _fill_operands(program, fills)
    k = ss.lower(program, strategy="lattice", **tensors)
    np.testing.assert_array_equal(k(**tensors).to_numpy(), evaluate(program, **tensors)[0])
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), evaluate(program, **tensors)[0])


@st.composite
def csc_row_slices(draw):
    """A CSC matrix's rows sliced (any step, negative too, bounds as numpy takes them), maybe
    times or plus a CSC operand of the result's shape, into CSC."""
    n, m = draw(st.integers(0, 7)), draw(st.integers(0, 4))
    sl = slice(draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1)),
               draw(st.sampled_from([1, 2, 3, -1, -2, -3])))
    return (n, m), sl, draw(st.sampled_from(["", " * B[k, i]", " + B[k, i]"]))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(csc_row_slices(), st.integers(0, 2 ** 32 - 1))
@example(((7, 3), slice(None, None, 3), ""), 0)               # A[::3] of a CSC (refused by both strategies)
@example(((6, 2), slice(None, None, -2), " * B[k, i]"), 1)
@example(((0, 2), slice(0, 0, 1), ""), 0)
def test_a_csc_sliced_along_its_rows_with_a_step_into_csc(case, seed):
    """The loops run in the output's mode order, so a CSC output walks columns outside rows, as a
    CSC operand stores them: its rows' coordinates are searched to the slice's start and filtered by
    the step in each column (it was refused: 'the loops reach its level 1 (j) before level 0')."""
    (n, m), sl, tail = case
    start, stop, step = sl.indices(n)
    stop = max(stop, start) if step > 0 else min(stop, start)
    rng = np.random.default_rng(seed)
    a = rand(rng, (n, m), 0.5)
    want = a[sl]
    b = rand(rng, want.shape, 0.6)
    tensors = {"A": as_format(a, "csc"), "B": as_format(b, "csc")}
    program = f"C[k, i] = slice(A[j, i], j -> k, ({start}, {stop}, {step})){tail}"
    tensors = {t: v for t, v in tensors.items() if f"{t}[" in program}
    want = want * b if "*" in tail else want + b if "+" in tail else want
    got = run_all(program, tensors, out="csc")
    np.testing.assert_array_equal(got, want)
    k = ss.lower(program, strategy="lattice", **tensors, C="csc")
    assert k(**tensors).format.shorthand == "csc"
    if len(range(start, stop, step)) > 1 and m and abs(step) > 1 and not tail:
        assert "%" in k.c_source, k.c_source     # (the stride's coordinate test)


def test_a_csc_vstack_and_slices_through_the_array_front_end_into_csc():
    import scipy.sparse as sp
    from compiler import array as xp
    a = rand(np.random.default_rng(4), (7, 4), 0.5)
    c = xp.asarray(sp.csc_matrix(a))
    for expr, want in ((c[::3], a[::3]), (c[::-2, 1:], a[::-2, 1:]), (xp.concat([c[1::2], c], axis=0),
                                                                       np.vstack([a[1::2], a]))):
        k = expr.lower(format="csc")
        assert k.strategy == "lattice" and not k.trace.find("materialize"), k.trace.find("materialize")
        got = expr.compute(format="csc")
        assert got.format.shorthand == "csc"
        np.testing.assert_array_equal(got.to_numpy(), want)


def test_a_sparse_output_reserves_room_for_its_operands_entries():
    rng = np.random.default_rng(3)
    B, C = as_format(rand(rng, (3, 4)), "csr"), as_format(rand(rng, (2, 4)), "coo")
    k = ss.lower("D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)", strategy="lattice", B=B, C=C, D="csr")
    hints = [s for s in ir_walk(k.function.body) if isinstance(s, Grow) and s.hint]
    assert [str(h.needed) for h in hints] == ["B1_pos[B0_size] + C0_pos[1]"] * 2
    assert np.array_equal(run_all("D[l, i] = concat((B[j, i], C[k, i]), (j, k) -> l)", {"B": B, "C": C}, out="csr"),
                          np.vstack([B.to_numpy(), C.to_numpy()]))
    # a hint short of the entries (a broadcast row added everywhere): the buffers still grow
    v = Tensor.from_numpy(np.arange(1.0, 5.0), "dense")
    got = run_all("D[i, j] = B[i, j] + broadcast(i:3, v[j])", {"B": B, "v": v}, out="coo")
    assert np.array_equal(got, B.to_numpy() + np.arange(1.0, 5.0))


@st.composite
def slices(draw):
    """A row slice of a matrix (any bounds numpy takes, steps negative too), its input's format and
    fill, and the output's format."""
    n, m = draw(st.integers(0, 6)), draw(st.integers(1, 4))
    step = draw(st.sampled_from([1, 2, 3, -1, -2]))
    start, stop = draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1))
    fmt = draw(st.sampled_from(FORMATS + ("dcsr",)))
    fill = draw(st.sampled_from([0.0, 0.0, 1.0, np.nan, np.inf]))
    out = draw(st.sampled_from([None, "csr", "coo"]))
    return (n, m), slice(start, stop, step), fmt, fill, out


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(slices(), st.integers(0, 2 ** 32 - 1))
@example(((5, 3), slice(4, None, -2), "csr", 0.0, "csr"), 0)        # reversed (once refused)
@example(((6, 2), slice(-2, 0, -3), "coo", 0.0, "coo"), 1)          # a COO walked backwards, to a COO
@example(((0, 2), slice(0, 0, 1), "coo", 0.0, "coo"), 0)            # nothing to slice
@example(((6, 2), slice(1, 6, 2), "dense", np.nan, None), 0)        # a NaN fill (once refused)
@example(((6, 2), slice(5, None, -2), "coo", 1.0, "coo"), 2)        # a fill kept, into a COO of that fill
def test_random_row_slices(case, seed):
    (n, m), sl, fmt, fill, out = case
    start, stop, step = sl.indices(n)
    # (normalized as the notation takes them: an empty slice stops where it starts)
    stop = max(stop, start) if step > 0 else min(stop, start)
    a = rand(np.random.default_rng(seed), (n, m), 0.5)
    A = as_format(a, fmt) if fill == 0 else Tensor.from_numpy(np.where(a == 0, fill, a), fmt, fill=fill)
    program = f"C[k, i] = slice(A[j, i], j -> k, ({start}, {stop}, {step}))"
    if fill != 0 and out is not None:
        # a sparse output of fill 0 would show 0 where the slice holds its fill: refused...
        with pytest.raises(StrategyError, match=re.escape(f"C has fill 0.0, and the result's is {fill}")):
            ss.lower(program, strategy="lattice", A=A, C=out)
        out = ss.parse_format(out, ndim=2, fill=fill)     # (... and lowered into one of its fill)
    got = run_all(program, {"A": A}, out=out)
    assert np.array_equal(got, A.to_numpy()[sl], equal_nan=True), (program, fmt, out)


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
@given(programs(), st.lists(st.sampled_from(FORMATS + ("dcsr",)), min_size=12, max_size=12),
       st.integers(0, 2 ** 32 - 1), st.booleans())
@example(("C[i, j] = concat((M1[j6, j], split(collapse(R2[a3, b4], (a3, b4) -> k5), k5 -> (k7, j:3))), (j6, k7) -> i)",
          {"M1": (1, 3), "R2": (1, 6)}), ["csr"] * 12, 0, False)     # R2's entries were dropped: now refused
@example(("C[i, j] = concat((M1[j6, j], split(collapse(R2[a3, b4], (a3, b4) -> k5), k5 -> (k7, j:3))), (j6, k7) -> i)",
          {"M1": (1, 3), "R2": (1, 6)}), ["csr"] * 12, 2, True)      # split in rows of 1: M1's row was dropped
def test_random_expressions_collapsed_and_split_compiled(prog, formats, seed, split):
    """A random matrix expression flattened (row-major), or flattened and split again, into a
    dense or sparse output: as evaluate computes it, or refused for a limit the sequence layer
    documents (or a concatenation's broadcast operand), naming looplets."""
    text, shapes = prog
    if not text.startswith("C[i, j] = "):
        return
    rhs = text[len("C[i, j] = "):]
    rng = np.random.default_rng(seed)
    arrays = {n: rand(rng, s, rng.choice([0.0, 0.3, 1.0])) for n, s in shapes.items()}
    n, m = evaluate(text, **arrays)[0].shape
    if split:
        p = [d for d in range(1, n * m + 1) if (n * m) % d == 0][seed % len([d for d in range(1, n * m + 1)
                                                                           if (n * m) % d == 0])]
        program = f"D[p, q] = split(collapse({rhs}, (i, j) -> k), k -> (p, q:{n * m // p}))"
    else:
        program = f"c[k] = collapse({rhs}, (i, j) -> k)"
    want = evaluate(program, **arrays)[0]
    tensors = {name: as_format(a, formats[k % len(formats)]) for k, (name, a) in enumerate(arrays.items())}
    outs = OUTPUTS[want.ndim]
    try:
        got = run_all(program, tensors, out=outs[seed % len(outs)])
    except StrategyError as e:
        assert re.search(LAYER_LIMITS, str(e)) or re.search(BOTH_WAYS, str(e)) and ", -" in program, (program, str(e))
        assert "strategy='looplets'" in str(e)
        return
    assert np.array_equal(got, want), (program, {name: t.format for name, t in tensors.items()})


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 5), st.integers(1, 5), st.sampled_from([0.0, 1.0, np.nan, np.inf, -np.inf]),
       st.sampled_from([None, "csr", "coo"]), st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       st.integers(0, 2 ** 32 - 1))
@example(3, 200, 0.0, "csr", 0.3, 0)             # (Fig. 25b's kernel, small)
@example(0, 3, 0.0, "coo", 0.5, 0)               # an empty vector
@example(2, 4, np.nan, "coo", 0.5, 1)            # a NaN fill
@example(4, 1, -np.inf, None, 0.7, 2)            # one column, a -inf fill, dense output
def test_a_split_of_a_compressed_vector_finds_rows_without_dividing_each_entry(p, m, fill, out, density, seed):
    """Fig. 25's split of a compressed vector into CSR, COO or dense: its π1 loop tests
    each entry against its row's end (``idx < grp * m + m``) and takes its column as ``idx - grp * m``,
    a compare and a subtract where it divided and took a modulo per entry (the profile of
    Fig. 25a's kernel: both per entry). Against numpy's reshape, the oracle and both
    interpreters, over fills (NaN, infinities) and empty vectors; the C has no modulo."""
    rng = np.random.default_rng(seed)
    v = rand(rng, (p * m,), density)
    v = np.where(v == 0, fill, v)
    c = Tensor.from_numpy(v, "sparse", fill=fill)
    program = f"D[i, j] = split(c[k], k -> (i, j:{m}))"
    want = evaluate(program, c=c)[0]
    np.testing.assert_array_equal(want, v.reshape(p, m))
    fmt = None if out is None else ss.parse_format(out, ndim=2, fill=fill)
    got = run_all(program, {"c": c}, out=fmt)
    np.testing.assert_array_equal(got, want)
    src = ss.lower(program, strategy="lattice", c=c, **({} if fmt is None else {"D": fmt})).c_source
    assert "%" not in src, src
    # (a row of one column ends at grp + 1: the identities step folds grp * 1)
    end = rf"grp\w* \* {m} \+ {m}" if m > 1 else r"grp\w* \+ 1"
    assert re.search(rf"while \(.* < {end}\)", src), src


@pytest.mark.parametrize("shape, density, fill, index_dtype", [
    ((4, 3), 0.5, 0.0, "int32"), ((4, 3), 0.0, 0.0, "int64"), ((0, 3), 0.5, 0.0, "int32"),
    ((3, 5), 1.0, np.nan, "int64"), ((5, 2), 0.4, -np.inf, "int32")])
def test_a_sparse_vector_output_stores_its_count_once(shape, density, fill, index_dtype):
    """Fig. 24a's collapse into a compressed vector: the vector's one fiber ends at the entry
    counter, stored once after the loops, where pos[1] += 1 per entry made each entry's count wait
    on the last one's store. Against numpy's ravel, the oracle and both interpreters, empty and full,
    int32 and int64, fills NaN and -inf; the C stores pos[1] once."""
    a = rand(np.random.default_rng(1), shape, density)
    A = Tensor.from_numpy(np.where(a == 0, fill, a), "coo", fill=fill)
    program = "c[k] = collapse(A[i, j], (i, j) -> k)"
    out = ss.parse_format("sparse_vector", fill=fill, index_dtype=index_dtype)
    got = run_all(program, {"A": A}, out=out)
    np.testing.assert_array_equal(got, A.to_numpy().ravel())
    src = ss.lower(program, strategy="lattice", A=A, c=out).c_source
    assert "c0_pos[1] +=" not in src and len(re.findall(r"c0_pos\[1\] = ", src)) == 1, src


@pytest.mark.parametrize("program, tensors", [
    ("C[i, j] = split(b[k], k -> (i, j:2))", {"b": Tensor.from_numpy(np.arange(4.0), "sparse"),
                                              "C": Format(coo().root, (1, 0))}),
    ("C[i, j] = split(collapse(A[r, c], (r, c) -> k), k -> (i, j:2))",
     {"A": Tensor.from_numpy(np.array([[1.0, 0], [2.0, 3.0]]), "csr"), "C": "csc"}),
])
def test_splits_into_column_major_outputs_lower(program, tensors):
    # (both were refused: a split's minor index looped outside its major one; a vector's groups are now
    # searched for a column, compiler.lattice.seqstride, and a CSC is scattered, compiler.lattice.seqscatter)
    inputs = {t: x for t, x in tensors.items() if t != "C"}
    k = ss.lower(program, strategy="lattice", **tensors)
    np.testing.assert_array_equal(k(**inputs).to_numpy(), evaluate(program, **inputs)[0])
    np.testing.assert_array_equal(k.interpret(**inputs).to_numpy(), evaluate(program, **inputs)[0])
