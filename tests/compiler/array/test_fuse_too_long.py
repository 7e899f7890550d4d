"""Given no strategy, a fused statement whose lattice kernel is too long to be worth lowering, and which looplets
refuse as one, is computed in pieces (compiler.lowering_budget.TOO_LONG_CFIR, issue 30): a minimum of a CSC matrix's
row stacked beside a column of a dense one with the maximum of four stacked columns of another CSC and a COO
matrix was a lattice of 16 points, each holding loops of 14 to 29 points (117,914 lines of C, 79 s to lower,
found by a differential fuzz of the front end); its operands are now computed apart, the trace's ``retry`` step
saying why. Index notation, which no caller computes in pieces, still gets the lattice's kernel. Against numpy."""

import numpy as np

import compiler as ss
from compiler import array as xp
from compiler import lowering, lowering_budget
from compiler.array.attempts import CHOSEN
from compiler.lowering import clear_cache
from compiler.lowering_budget import TOO_LONG_CFIR, splits

nan, inf = np.nan, np.inf


def test_issue_30_a_fused_lattice_of_many_points_is_computed_in_pieces():
    A = ss.Tensor.from_numpy(np.array([[nan, nan, nan]]), "csc", fill=nan)
    B = ss.Tensor.from_numpy(np.array([[inf, 0.5, -0.0]]), "dense")
    C = ss.Tensor.from_numpy(np.array([[1.0, 0.0, inf, 0.0, 0.0]]), "csc")
    D = ss.Tensor.from_numpy(np.array([[1.0, 1.0, 1.0, inf]]), "coo", fill=1.0)
    a, b, c, d = map(xp.asarray, (A, B, C, D))
    part = c[:, 1] * c[:, 4] - c[:, 4]
    expr = xp.minimum(xp.concat([a, xp.stack([b[:, 2]], axis=1)], axis=1),
                      xp.maximum(xp.stack([part, c[:, 3], part, c[:, 4]], axis=1), d))
    c_ = C.to_numpy()
    part_ = c_[:, 1] * c_[:, 4] - c_[:, 4]
    with np.errstate(invalid="ignore"):
        want = np.minimum(np.concatenate([A.to_numpy(), B.to_numpy()[:, [2]]], axis=1),
                          np.maximum(np.stack([part_, c_[:, 3], part_, c_[:, 4]], axis=1), D.to_numpy()))
        kernel = expr.lower()
        np.testing.assert_array_equal(np.asarray(expr.compute()), want)
    (retry,) = kernel.trace.find("retry")
    why = retry.data["why"]
    assert "the lattice strategy's sequence CFIR is" in why and f"(more than {TOO_LONG_CFIR:,})" in why, why
    assert "looplets refuse the statement as one" in why and "its operands computed apart instead" in why, why
    assert kernel.trace.find("materialize") and len(kernel.c_source.splitlines()) < 2000
    assert not splits()     # (the caller's context is left as it was)


def test_index_notation_keeps_the_lattices_kernel(monkeypatch):
    # (the limits lowered, so that a short stack of a CSC matrix's columns beside a slice of it is too long: the
    # array front end tries its next form, index notation keeps the one lattice kernel, no caller computing it in
    # pieces; looplets refuse the slice read where a concatenation makes its index)
    monkeypatch.setattr(lowering_budget, "TOO_LONG_CFIR", 5)
    monkeypatch.setattr(lowering, "LONG_CFIR", 5)
    clear_cache()
    CHOSEN.clear()
    values = np.array([[1.0, 0.0, inf, 0.0, 0.0], [0.0, 2.0, 0.0, 3.0, 1.0]])
    C = ss.Tensor.from_numpy(values, "csc")
    c = xp.asarray(C)
    expr = xp.maximum(xp.stack([c[:, 1] * c[:, 4] - c[:, 4], c[:, 3]], axis=1), c[:, :2])
    with np.errstate(invalid="ignore"):
        want = np.maximum(np.stack([values[:, 1] * values[:, 4] - values[:, 4], values[:, 3]], axis=1),
                          values[:, :2])
        kernel = expr.lower()
        # (its first form refused as too long: the next computes its operands apart)
        assert "(more than 5)" in kernel.trace.find("retry")[0].data["why"]
        np.testing.assert_array_equal(np.asarray(expr.compute()), want)
        program = "out[i, j] = max(concat((broadcast(k:1, C[i, 1] * C[i, 4] - C[i, 4]), broadcast(l:1, C[i, 3])), " \
                  "(k, l) -> j), slice(C[i, m], m -> j, (0, 2, 1)))"
        whole = ss.lower(program, C=C, out="dense")
        assert whole.strategy == "lattice" and not whole.trace.find("materialize")
        np.testing.assert_array_equal(np.asarray(whole(C=C).to_numpy()), want)
    clear_cache()
    CHOSEN.clear()
