import json

import numpy as np
import pytest

import compiler as ss
from compiler.errors import UsageError
from compiler.imperative.examples import csr_spmv
from explorer import explore
from explorer.examples import build_broken
from explorer.session import Session, stage_matches


@pytest.fixture(scope="module")
def trace():
    """A real trace from compiler pieces: parse, fiber trees, hand IR, emit-c, compile."""
    t = ss.Trace()
    program = ss.parse("y[i] = A[i, j] * x[j]", trace=t)
    A = ss.Tensor.from_numpy(np.array([[0, 1.5, 0], [2.0, 0, 3.0]]), "csr", name="A")
    t.record("inputs", before=program, after=program, artifacts=[ss.fiber_tree_artifact(A)])
    ss.compile_function(csr_spmv(), trace=t)
    return t


def test_session_over_real_trace(trace):
    s = explore(trace)
    assert isinstance(s, Session) and len(s) == 4
    assert s.stages() == ["parse", "inputs", "emit-c", "compile"]
    assert s.current == 0 and s.error is None
    assert s.step(0).program == "y[i] = sum[j](A[i, j] * x[j])"
    # compile carries no program: it shows the C emitted before it
    assert s.program_text(3) == s.steps[2].after_text and "spmv" in s.program_text(3)
    assert s.step(-1).index == 3


def test_navigation_and_filters(trace):
    s = explore(trace)
    assert s.next().index == 1 and s.next().index == 2 and s.prev().index == 1
    s.filter(hide_unchanged=True)
    assert s.visible == [0, 1, 2]  # compile changed nothing
    s.filter(stage="emit-c")
    assert s.visible == [2] and s.current == 2
    s.clear_filters()
    assert s.visible == [0, 1, 2, 3]
    assert list(v.index for v in s) == [0, 1, 2, 3]


def test_rule_filter_and_stage_families():
    t = ss.Trace()
    t.record("lower:Stepper", before="a", after="b")
    t.record("simplify", before="x + 0", after="x", rewrites=[ss.Rewrite("add-zero", "x + 0", "x")])
    t.record("simplify", before="x * 1", after="x", rewrites=[ss.Rewrite("mul-one", "x * 1", "x")])
    s = explore(t)
    assert s.rules() == ["add-zero", "mul-one"]
    assert s.filter(rule="mul-one").visible == [2]
    assert s.filter(rule=(), stage="lower").visible == [0]
    assert s.filter(stage="lower:").visible == [0]
    assert stage_matches("schedule:split", "schedule") and not stage_matches("simplify", "lower")


def test_explore_json_path_and_text(trace, tmp_path, monkeypatch):
    path = tmp_path / "t.json"
    path.write_text(trace.to_json())
    from_path = explore(str(path))
    from_text = explore(trace.to_json())
    assert from_path.stages() == from_text.stages() == trace.stages()
    assert "explore(" in from_path.recipe and str(path) in from_path.recipe
    # the recipe of an in-memory trace recreates it from the file it says to save (a few
    # lines: it held the trace's JSON, 58 KB for the tour's SpMV)
    recipe = explore(trace).recipe
    assert len(recipe) < 600 and "trace.to_json()" in recipe
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trace.json").write_text(trace.to_json())
    ns = {}
    exec(recipe, ns)
    assert ns["session"].stages() == trace.stages()
    with pytest.raises(FileNotFoundError):
        explore(str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match=r"not a sparsescope trace"):   # JSON text, not a file named "[]"
        explore("[]")
    with pytest.raises(TypeError, match="explore"):
        explore(42)


def test_failed_build_keeps_steps_and_marks_failure():
    s = explore(build_broken)
    assert s.error.startswith("FormatError: level SparseBand")
    assert s.stages() == ["parse", "concretize", "error"]
    assert s.failed_index == 2 and s.current == 2
    failing = s.step()
    assert failing.is_failure and "Traceback" in failing.step.note
    assert failing.program == "y[i] = sum[j](A[i, j] * x[j])"  # the IR where it stopped
    # the failing step stays visible whatever the filters say
    assert 2 in s.filter(stage="parse").visible


def test_failure_recorded_by_the_compiler_is_not_duplicated():
    s = explore(lambda t: ss.parse("y[i] = A[i, j * x[j]", trace=t))
    assert s.stages() == ["parse"] and s.failed_index == 0
    assert s.error.startswith("ParseError")


def test_failed_session_round_trips_through_json():
    s = explore(build_broken)
    again = explore(s.trace.to_json())
    assert again.failed_index == 2 and again.current == 2
    assert again.error == s.error  # the error lives on the step
    assert json.loads(s.trace.to_json())["format"] == "sparsescope-trace"


def test_exception_carrying_its_trace_is_adopted():
    def build(trace):
        own = ss.Trace()
        own.record("parse", after="y[i] = x[i]")
        own.record("concretize")
        err = ss.StrategyError("cannot iterate x")
        err.trace = own  # what compiler.lower does when it records into its own trace
        raise err

    s = explore(build)
    assert s.stages() == ["parse", "concretize", "error"] and s.current == 2


def test_stages_are_step_indices_where_a_stage_repeats():
    """A lowering whose stages repeat (a lattice per index, a lower:* per looplet): ``stages()``
    is one name per step, as the trace's, so ``stages().index(name)`` is the step of that name (it
    listed each name once: the index of "cfir" named an earlier step); ``stage_names()`` lists
    each once and ``indices()`` gives every step of one."""
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", "lattice", A="csr", B="csr", C="csr")
    s = explore(k)
    assert s.stages() == k.trace.stages() and len(s.stages()) == len(s)
    assert s.stages().count("lattice") == 2
    for name in ("cfir", "emit-c"):
        assert s.step(s.stages().index(name)).stage == name
        assert s.goto(s.stages().index(name)).stage == name
    assert s.stage_names() == list(dict.fromkeys(k.trace.stages()))
    assert s.indices("lattice") == [i for i, st in enumerate(k.trace.stages()) if st == "lattice"]
    assert [s.steps[i].stage for i in s.indices("lattice")] == ["lattice", "lattice"]
    assert s.indices("no-such-stage") == []
    looplets = explore(ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense"))
    lowered = looplets.indices("lower:")
    assert lowered and all(looplets.steps[i].stage.startswith("lower:") for i in lowered)
    assert lowered == [i for i, st in enumerate(looplets.stages()) if st.startswith("lower:")]
