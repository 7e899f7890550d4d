"""The trace of a looplet lowering: passes, unfurls, looplet rules, rewrites, then the C."""

import json

import numpy as np

from compiler import Tensor
from compiler.levels import Element, SparseBand, SparseList
from compiler.looplets import compile_program, loop_program
from compiler.trace import Trace


@loop_program
def dot(C, A, B):
    for i in _:
        C += A[i] * B[i]


def kernel():
    A = Tensor.from_numpy(np.array([0, 1.9, 0, 3.0, 2.7, 0, 0, 0, 5.5, 0, 0]), SparseList(Element(0.0)))
    B = Tensor.from_numpy(np.array([0, 0, 0, 3.7, 4.7, 9.2, 1.5, 8.7, 0, 0, 0]), SparseBand(Element(0.0)))
    return compile_program(dot, C=Element(0.0), A=A, B=B)


def test_stages_in_order():
    stages = kernel().trace.stages()
    assert stages[:5] == ["program", "wrapperize", "concordize", "lifecycle", "dimensionalize"]
    # (value-facts: what the lowering assumed the values hold, where an annihilator was weighed)
    assert [s for s in stages if s != "value-facts"][-3:] == ["imperative", "emit-c", "compile"]
    for s in ("unfurl", "lower:Thunk", "lower:Sequence", "lower:Stepper", "lower:Spike", "lower:Run", "simplify"):
        assert s in stages


def test_unfurl_records_looplet_nests():
    step = kernel().trace.find("unfurl")[0]
    nests = [a for a in step.artifacts if a.kind == "looplet-nest"]
    assert {a.name for a in nests} == {"A[i]", "B[i]"}
    band = next(a for a in nests if a.name == "B[i]")
    assert "Sequence" in band.text and "Lookup" in band.text
    assert band.dot.startswith('digraph "B"') and "->" in band.dot


def test_lowering_steps_name_rule_and_extents():
    t = kernel().trace
    step = t.find("lower:Stepper")[0]
    assert "over [" in step.note and "while loop" in step.note
    spike = t.find("lower:Spike")[0]
    assert "body + tail" in spike.note and "->" in spike.note


def test_simplifier_rewrites_recorded():
    t = kernel().trace
    rules = {r.rule for s in t.find("simplify") for r in s.rewrites}
    assert {"annihilator", "noop-update"} <= rules
    r = next(r for s in t.find("simplify") for r in s.rewrites if r.rule == "annihilator")
    assert "0.0" in r.before and r.after == "0.0"


def test_trace_round_trips_through_json():
    t = kernel().trace
    back = Trace.from_json(t.to_json())
    assert back.stages() == t.stages()
    json.loads(t.to_json())


def test_looplet_lowerings_are_tagged_for_provenance():
    """Each looplet lowering's code is wrapped in Tagged("looplet:<style>:<n>"), and the
    lowering's trace step names its tag, so the explorer can colour C lines by looplet (the
    statement's code inside them by the nodes of its tree, ``expr:l<line>n<m>``)."""
    import numpy as np
    from compiler import Tensor
    from compiler.backend.c_emitter import emit_c_with_provenance
    from compiler.imperative.ir import Tagged
    from compiler.imperative.traverse import walk as ir_walk
    from compiler.looplets import compile_program, loop_program

    @loop_program
    def spmv(y, A, x):
        for i in _:
            for j in _:
                y[i] += A[i, j] * x[j]
    A = Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
    x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")
    k = compile_program(spmv, y="dense", A=A, x=x)
    tags = [n.tag for n in ir_walk(k.function.body) if isinstance(n, Tagged) and not n.tag.startswith("expr:l")]
    assert tags and all(t.startswith("looplet:") for t in tags)
    assert {t.split(":")[1] for t in tags} >= {"Lookup", "Stepper"}
    _, lines = emit_c_with_provenance(k.function)
    assert set(tags) <= set(lines)
    notes = " ".join(s.note or "" for s in k.trace.steps if s.stage.startswith("lower:"))
    assert tags[0] in notes
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), [4.0, 10.0])
