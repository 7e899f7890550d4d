"""Large array expressions under the looplets strategy (issue 30), checked against numpy, their size bounded.

A concat of mixed scipy/COO/hash parts with ``//`` and ``@`` read the rows of its product's left operand once per
column block of the concat, as three operands whose regions multiplied: 56,418 lines of C in 55 s of lowering
(the lattice's 1.4 s). Reads of one fiber on one index now share their looplet nest, whatever their later
indices (compiler.looplets.looplet_access.read_key)."""

import numpy as np
import scipy.sparse as sps

import compiler as ss
from compiler import array as xp
from compiler.format import Format
from compiler.levels import Element, SparseHash


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

