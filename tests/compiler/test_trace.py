from dataclasses import dataclass

import pytest

from compiler import Artifact, Rewrite, Trace, serialize


@serialize.node
@dataclass(frozen=True)
class Prog:
    body: tuple

    def pretty(self):
        return "; ".join(self.body)


def make_trace():
    t = Trace()
    t.record("parse", after=Prog(("y[i] += A[i, j] * x[j]",)))
    t.record("simplify", before=Prog(("x * 1",)), after=Prog(("x",)),
             rewrites=[Rewrite("mul-identity", "x * 1", "x")])
    t.record("emit-c", artifacts=[Artifact("c", "spmv", "void f(void) {}", dot=None),
                                  Artifact("fiber-tree", "A", "A\n  0", dot="digraph { a }")])
    t.record("compile", note="compiled in 120 ms")
    return t


def test_steps_keep_order_and_text():
    t = make_trace()
    assert t.stages() == ["parse", "simplify", "emit-c", "compile"]
    assert t[1].before_text == "x * 1" and t[1].after_text == "x"
    assert t[0].after_text == "y[i] += A[i, j] * x[j]"


def test_json_round_trip_rebuilds_ir_objects():
    t = make_trace()
    back = Trace.from_json(t.to_json(indent=1))
    assert back.stages() == t.stages()
    assert back[1].after == Prog(("x",))
    assert back[1].rewrites == (Rewrite("mul-identity", "x * 1", "x"),)
    assert back[2].artifact("fiber-tree").dot == "digraph { a }"
    assert back[3].note == "compiled in 120 ms"


def test_changed_flags_steps_that_did_nothing():
    t = Trace()
    same = t.record("concordize", before=Prog(("a",)), after=Prog(("a",)))
    diff = t.record("wrapperize", before=Prog(("a",)), after=Prog(("b",)))
    assert not same.changed and diff.changed


def test_find_by_stage_and_prefix():
    t = Trace()
    t.record("lower:Stepper")
    t.record("lower:Run")
    t.record("simplify")
    assert len(t.find("lower:")) == 2 and len(t.find("simplify")) == 1


def test_missing_artifact_names_what_is_there():
    t = make_trace()
    with pytest.raises(KeyError, match=r"no 'lattice' artifact; it has \['c', 'fiber-tree'\]"):
        t[2].artifact("lattice")


def test_not_a_trace_is_rejected():
    with pytest.raises(ValueError, match="not a sparsescope trace"):
        Trace.from_json('{"steps": []}')


@pytest.mark.parametrize("text, message", [
    ('{"format": "sparsescope-trace", "steps": [', "its JSON cannot be read"),
    ('{"format": "sparsescope-trace", "steps": [{"_np": "int8", "v": 300}]}', "step 0 cannot be read"),
    ('{"format": "sparsescope-trace", "steps": [' + "1" * 5000 + "]}", "its JSON cannot be read"),
])
def test_a_damaged_trace_is_a_usage_error_saying_so(text, message):
    from compiler.errors import UsageError
    with pytest.raises(UsageError, match=f"not a sparsescope trace: {message}"):
        Trace.from_json(text)


def test_texts_and_drawings_are_made_when_read_and_saved_as_made():
    # a step's program text, an artifact's parts and a rewrite's terms may be given as Later values
    # (or immutable IR): nothing is printed until read, and a saved trace holds the text (before:
    # a Later given as a step's program could not be saved)
    from compiler.imperative.ir import Store, Var
    from compiler.trace import Later
    made = []

    def text(t):
        return Later(lambda: made.append(t) or t)
    t = Trace()
    store = Store("y", Var("i"), 1.0)
    t.record("cleanup", before=text("a;"), after=store, rewrites=[Rewrite("r", store, text("b;"))],
             artifacts=[Artifact.deferred("ir", "k", lambda: (made.append("drawn") or "k;", "digraph {}", None))])
    assert made == []
    back = Trace.from_json(t.to_json())
    assert sorted(made) == ["a;", "b;", "drawn"]
    step = back[0]
    # (a Later program reads as its text, made once for both fields: a looplet step's is)
    assert (step.before, step.before_text, step.after_text) == ("a;", "a;", "y[i] = 1.0;")
    assert (step.rewrites[0].before, step.rewrites[0].after) == ("y[i] = 1.0;", "b;")
    assert (step.artifacts[0].text, step.artifacts[0].dot) == ("k;", "digraph {}")
    assert t[0].after_text == "y[i] = 1.0;" and len(made) == 3   # (made once)
