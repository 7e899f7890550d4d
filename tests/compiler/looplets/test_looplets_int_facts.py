"""The looplet lowering's integer facts as a trace step (issue 29, provenance as data): the
``int-facts`` step lists each fact the lowering proved with, as data (kind, subject, fact, reason),
for the arrays and locals its kernel still reads."""

import numpy as np
import scipy.sparse as sp

import compiler as ss
from compiler import Trace
from compiler.reference import evaluate

S = sp.random(7, 9, density=0.3, format="csr", random_state=4)
T = sp.random(7, 9, density=0.3, format="csr", random_state=5)
X = np.arange(9.0)


def facts_step(kernel):
    steps = kernel.trace.find("int-facts")
    assert len(steps) == 1, kernel.trace.stages()
    return steps[0]


def by_fact(step):
    return {r["fact"]: r for r in step.data["facts"]}


def test_csr_plus_csr_records_its_coordinates_and_fibers_last():
    A, B = ss.Tensor.from_scipy(S, "csr"), ss.Tensor.from_scipy(T, "csr")
    k = ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=B, C="csr")
    np.testing.assert_array_equal(k(A=A, B=B).to_numpy(),
                                  evaluate("C[i, j] = A[i, j] + B[i, j]", A=A, B=B)[0])
    step = facts_step(k)
    facts = by_fact(step)
    for t in "AB":
        coords = facts[f"0 <= {t}1_idx[_] < {t}1_size"]
        assert coords["kind"] == "coordinates" and coords["subject"] == f"{t}1_idx"
        assert f"validated when {t} is built" in coords["reason"]
        last = facts[f"0 <= last{t} <= {t}1_size"]
        assert (last["kind"], last["low"], last["high"]) == ("bound", "0", f"{t}1_size")
        assert "one past the last coordinate" in last["reason"]
    # (the merge's first phase stops at the lesser last: its stop is that definition)
    assert any(r["kind"] == "definition" and "lastA" in r["equals"] and "lastB" in r["equals"]
               for r in step.data["facts"])
    # the same data in the artifact the explorer draws, and its text one fact a line
    art = step.artifact("int-facts")
    assert art.data == step.data
    assert art.text.splitlines() == [f"{r['fact']}: {r['reason']}" for r in step.data["facts"]]
    assert "2 arrays of stored coordinates" in step.note
    # a step of the trace's order: after the lowering and its passes, before the whole kernel
    stages = k.trace.stages()
    assert stages.index("dimensionalize") < stages.index("int-facts") < stages.index("imperative")


def test_spmv_records_the_row_facts_and_only_those_about_what_its_c_reads():
    A = ss.Tensor.from_scipy(S, "csr")
    k = ss.lower("y[i] += A[i, j] * x[j]", strategy="looplets", A=A, x=X)
    np.testing.assert_allclose(k(A=A, x=X).to_numpy(), S @ X)
    facts = by_fact(facts_step(k))
    assert "0 <= A1_idx[_] < A1_size" in facts
    # (a row's first phase, up to lastA, is entered when the row stores an entry: the C tests
    # qA < qA_stop and no longer loads the row's last coordinate; the fact says why)
    assert "lastA > 0 exactly when qA < qA_stop" in facts and "lastA" not in k.c_source
    for r in facts.values():
        assert (r["subject"] in k.c_source or all(n in k.c_source for n in r["reads"])) and r["reason"]


def test_the_facts_survive_a_saved_trace():
    A = ss.Tensor.from_scipy(S, "csr")
    k = ss.lower("y[i] += A[i, j] * x[j]", strategy="looplets", A=A, x=X)
    back = Trace.from_json(k.trace.to_json()).find("int-facts")[0]
    assert back.data == facts_step(k).data and back.artifacts[0].data == back.data

