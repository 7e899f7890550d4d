"""Which operands the looplets' kernel of a statement with shape operators would gather (locate at
each coordinate its loops visit), asked of their plan before lowering: no kernel is compiled here.
New module: every test fails on main (no compiler.looplets.gathers)."""

import pytest

from compiler.errors import StrategyError
from compiler.format import Format, parse_format
from compiler.looplets.gathers import gathered
from compiler.notation import parse


def formats(**given):
    return {t: f if isinstance(f, Format) else parse_format(f, ndim=1 if f in ("dense1", "sparse_vector") else 2)
            for t, f in given.items()}


def test_a_sparse_level_whose_loop_runs_outside_its_parents_is_gathered():
    # a CSC's rows under a row-major concat: each row located in each column
    stmt = parse("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)")
    assert gathered(stmt, formats(A="csc", B="csr")) == {
        "A": "A[k, j]: its level 1 (SparseList) is indexed by k, whose loop runs outside the one over j of its "
             "parent level"}
    # walked in storage order: nothing gathered (a COO's two modes one level, stored row-major)
    assert gathered(stmt, formats(A="csr", B="coo")) == {}
    # a dense level is located, not searched: a column-major dense operand is no gather
    column_major = Format(parse_format("dense", ndim=2).root, (1, 0))
    assert gathered(stmt, formats(A=column_major, B="csr")) == {}


def test_a_level_read_at_a_computed_index_is_gathered():
    # a split of a slice of a collapse reads a CSC's collapse at let-bound quotients; a CSR's is read
    # raveled, its entries walked in storage order (each row's window an offset of the inner loop)
    stmt = parse("out[p, q] = split(slice(collapse(A[i, j], (i, j) -> k), k -> m, (2, 18, 1)), m -> (p:4, q:4))")
    (why,) = gathered(stmt, formats(A="csc")).values()
    assert why.endswith("computed at each coordinate the loops visit"), why
    assert gathered(stmt, formats(A="csr")) == {} and gathered(stmt, formats(A="dense")) == {}
    # a strided slice of a CSR's columns: each column located in a loop of one step
    stmt = parse("out[i, k] = slice(A[i, j], j -> k, (4, -1, -2))")
    assert gathered(stmt, formats(A="csr")) == {
        "A": "A[i, t + (4 + k * -2)]: its level 1 (SparseList) is indexed by t + (4 + k * -2), computed at each "
             "coordinate the loops visit"}
    # a positive step seeks on from the last column (the row's cursor stays outside k's loop): walked,
    # a CSC's rows sliced so under the columns' loop too, and a CSC's kept columns or column window,
    # their loop moved outside the rows' (a CSR output scattered); into a COO they are not
    assert gathered(parse("out[i, k] = slice(A[i, j], j -> k, (1, 9, 2))"), formats(A="csr")) == {}
    assert gathered(parse("out[k, j] = slice(A[i, j], i -> k, (0, 9, 3))"), formats(A="csr")) == {}
    for step in (2, 1):
        window = parse(f"out[i, k] = slice(A[i, j], j -> k, (1, 9, {step}))")
        assert gathered(window, formats(A="csc")) == gathered(window, formats(A="csc", out="csr")) == {}
        (why,) = gathered(window, formats(A="csc", out="coo")).values()
        assert "whose loop runs outside the one over" in why, why
    # a split of a sparse vector is read at an offset of the inner loop: walked
    assert gathered(parse("out[i, j] = split(b[k], k -> (i:2, j:3))"), formats(b="sparse_vector")) == {}


def test_a_statement_looplets_refuse_raises_their_refusal_naming_the_lattice():
    with pytest.raises(StrategyError, match=r"discordant walk.*or lower it with strategy='lattice'$"):
        gathered(parse("out[] = sum[k](collapse(A[i, j], (i, j) -> k) * b[k])"), formats(A="csc", b="sparse_vector"))
