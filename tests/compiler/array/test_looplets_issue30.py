"""Large array expressions under the looplets strategy (issue 30), checked against numpy, their size bounded.

- A concat of mixed scipy/COO/hash parts with ``//`` and ``@`` read the rows of its product's left operand once
  per column block of the concat, as three operands whose regions multiplied: 56,418 lines of C in 55 s of
  lowering (the lattice's 1.4 s). Reads of one fiber on one index now share their looplet nest, whatever
  their later indices (compiler.looplets.looplet_access.read_key).
- ``where(a1 != a2, where(a3 == p1, p1, a5), 0.0)`` over 1x1x1 tensors of four fills lowered the product of
  its sparse lists' phases: 14,585 lines of C; four walks or more are merged into one loop
  (compiler.looplets.merged_walks)."""

import numpy as np
import scipy.sparse as sps
import sparse as pds

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseHash, SparseList


def lines(expr) -> int:
    return len(ss.lower(expr, strategy="looplets").c_source.splitlines())


def test_a_concat_of_mixed_parts_with_a_product_reads_each_row_once():
    i32 = np.array([[1, -2], [0, 3], [4, 0]], np.int32)
    c30 = ss.Tensor.from_numpy(np.zeros((3, 0)), "csc")
    b1 = sps.csc_matrix(np.array([[True], [False], [True]]))
    b2 = sps.csr_matrix(np.array([[False], [True], [True]]))
    left = xp.abs(xp.asarray(i32)) / xp.concat([xp.asarray(c30), xp.asarray(b1), xp.asarray(b2)], axis=1)
    e01 = xp.concat([xp.asarray(sps.coo_array(np.zeros((0, 1)))),
                     xp.asarray(ss.Tensor.from_numpy(np.zeros((0, 1)), "dcsr"))], axis=0)
    cc = ss.Tensor.from_numpy(np.array([[2.0, 0]], np.float32), "csc")
    h = ss.Tensor.from_numpy(np.array([3, 1]), Format(SparseHash(Element(1, dtype="int64"))))
    right = e01 @ (xp.asarray(cc) // xp.asarray(h))
    e = xp.concat([left, right, xp.asarray(np.zeros((0, 2)))], axis=0)
    with np.errstate(all="ignore"):
        want = np.concatenate([np.abs(i32) / np.concatenate([np.zeros((3, 0)), b1.toarray(), b2.toarray()], axis=1),
                               np.zeros((0, 2)), np.zeros((0, 2))])
        np.testing.assert_array_equal(np.asarray(e.compute(checked=True, strategy="looplets")), want)
    assert lines(e) < 15_000   # (56,418 when each column block's read of e01's rows was an operand of its own)


def test_where_over_tensors_of_four_fills_walks_its_lists_once():
    def dds(values, fill):
        return xp.asarray(ss.Tensor.from_numpy(np.array(values), Format(Dense(Dense(SparseList(Element(fill)))))))
    v = {"a1": [[[1.0]]], "a2": [[[0.0]]], "a3": [[[2.0]]], "p1": [[[2.0]]], "a5": [[[5.0]]]}
    a1, a2, a3, a5 = dds(v["a1"], 0.0), dds(v["a2"], 0.0), dds(v["a3"], 0.0), dds(v["a5"], -np.inf)
    p1 = xp.asarray(pds.COO.from_numpy(np.array(v["p1"])))
    e = xp.where(xp.astype(a1 != a2, xp.float64) != 0.0, xp.where(a3 == p1, p1, a5), 0.0)
    n = {k: np.array(x) for k, x in v.items()}
    want = np.where((n["a1"] != n["a2"]).astype(np.float64) != 0.0, np.where(n["a3"] == n["p1"], n["p1"], n["a5"]), 0.0)
    np.testing.assert_array_equal(np.asarray(e.compute(strategy="looplets")), want)
    assert lines(e) < 6_000   # (14,585 as the product of its lists' phases)
