"""Room reserved up front for a shape operator's sparse output (compiler.looplets.reserve): one
hint for the sum of the operands' stored entries before the loops, the per-entry checks kept, so
a result with more entries than the hint (an operand's fill that is not the output's) or fewer
(stored fills dropped) is still right. Each kernel against numpy and the dense oracle."""

import numpy as np
import pytest

import compiler as ss
from compiler.format import parse_format
from compiler.looplets.fibers import Namer
from compiler.looplets.reserve import entry_bound, stored_entries
from compiler.notation import parse
from compiler.reference import evaluate
from compiler.testing import check_lowered

nan = np.nan
A = np.array([[0, 1.5, 0, 4.0], [2.0, 0, 3.0, 0], [0, 0, 0, 0]])
B = np.array([[7.0, 0, 0, 1.0], [0, 0, 0, 0], [0, 5.0, 6.0, 0]])
VST = "D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)"
HST = "D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)"


def check(program, out, **specs):
    tensors = {n: ss.Tensor.from_numpy(a, f, fill=fill) for n, (a, f, fill) in specs.items()}
    want, fill = evaluate(program, **tensors)
    fmt = parse_format(out, ndim=want.ndim, fill=fill.item())
    kernel = ss.lower(program, "looplets", **tensors, **{program.split("[")[0]: fmt})
    got = kernel(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    return kernel, got


@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_a_concat_reserves_its_operands_entries_once_before_its_loops(out, fmt):
    k, got = check(VST, out, A=(A, fmt, 0.0), B=(B, fmt, 0.0))
    np.testing.assert_array_equal(got.to_numpy(), np.vstack([A, B]))
    c = k.c_source
    first_loop = c.index("for (")
    hint = c.index("// else the loops grow it as they go")
    assert hint < first_loop
    count = "(int64_t)A1_pos[A0_size] + (int64_t)B1_pos[B0_size]" if fmt == "csr" else \
        "(int64_t)A0_pos[1] + (int64_t)B0_pos[1]"
    assert c.count(f"if ({count} > ") == (2 if out == "csr" else 3)   # (idx, or both coordinates, and vals)
    assert any(s.stage == "reserve" for s in k.trace.steps)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("program", [VST, HST])
@pytest.mark.parametrize("out", ["csr", "coo"])
def test_more_entries_than_reserved_and_empty_operands_still_right(program, out, fill):
    # B's fill 2.0 is not the output's (A's): every position of B is written, past the hint
    # (its stored entries); an all-fill A and an empty row reserve nothing for them
    vertical = program == VST
    for a, b in ((A, B), (np.full((3, 4), fill), B), (A, np.full((3, 4), 2.0)), (A[:0] if vertical else A[:, :0], B)):
        bfill = 2.0 if b is not B else fill
        bb = np.where(b == 0, bfill, b) if b is B and bfill != 0 else b
        _, got = check(program, out, A=(a, "csr", fill), B=(bb, "coo", bfill))
        np.testing.assert_array_equal(got.to_numpy(), (np.vstack if vertical else np.hstack)([a, bb]))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_a_split_and_a_collapse_reserve_their_operands_entries(fill):
    v = np.array([fill, 1.0, fill, fill, 2.0, 3.0, fill, fill, fill, 4.0, fill, 5.0])
    k, _ = check("C[i, j] = split(b[k], k -> (i, j:4))", "coo", b=(v, "sparse", fill))
    assert "(int64_t)b0_pos[1] > C0_idx0_cap" in k.c_source
    k, _ = check("c[k] = collapse(A[i, j], (i, j) -> k)", "sparse", A=(np.where(A == 0, fill, A), "csr", fill))
    assert "(int64_t)A1_pos[A0_size] > c0_idx_cap" in k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_an_elementwise_operator_of_moved_entries_reserves_their_sum(fill):
    # (a collapse plus a sparse vector, a row slice times a matrix: each writes at most where one of
    # its operands stores an entry, as the lattice reserves)
    a = np.where(A == 0, fill, A)
    v = np.array([fill, 1.0, np.inf, fill, 2.0, nan, fill, fill, fill, 4.0, fill, -np.inf])
    k, _ = check("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", "sparse", A=(a, "csr", fill), b=(v, "sparse", fill))
    assert "(int64_t)A1_pos[A0_size] + (int64_t)b0_pos[1] > c0_idx_cap" in k.c_source
    k, _ = check("E[k, i] = slice(A[j, i], j -> k, (0, 3, 2)) * B[k, i]", "csr", A=(a, "csr", fill),
                 B=(np.where(B[:2] == 0, fill, B[:2]), "csr", fill))
    assert "n_kept + (int64_t)B1_pos[B0_size] > E1_idx_cap" in k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
def test_an_operand_read_several_times_reserves_its_entries_once(fill):
    # (A * A - A writes where A stores an entry: its count was reserved three times, three times the memory;
    # a concatenation of A with itself does write each twice)
    a = np.where(A == 0, fill, A)
    k, _ = check("C[i, j] = A[i, j] * A[i, j] - A[i, j]", "csr", A=(a, "csr", fill))
    assert "if ((int64_t)A1_pos[A0_size] > C1_idx_cap)" in k.c_source
    k, got = check("D[l, i] = concat((A[j, i], A[k, i]), (j, k) -> l)", "csr", A=(a, "csr", fill))
    assert "(int64_t)A1_pos[A0_size] + (int64_t)A1_pos[A0_size] > D1_idx_cap" in k.c_source


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("rows", [(0, 3, 2), (2, -1, -1), (1, 3, 1), (1, 1, 1), (0, 6, 3), (3, -1, -2)])
def test_a_row_slice_of_csr_counts_the_entries_of_the_rows_it_keeps(rows, out, fill):
    a = np.vstack([np.where(A == 0, fill, A), B])       # 6 x 4, an all-fill row
    k, got = check(f"S[k, i] = slice(A[j, i], j -> k, {rows})", out, A=(a, "csr", fill))
    np.testing.assert_array_equal(got.to_numpy(), a[list(range(*rows))])
    c = k.c_source
    if not range(*rows):
        return   # (nothing kept: room for none)
    if rows[2] == 1:   # (a window: its rows' entries are one difference of positions)
        assert f"(int64_t)A1_pos[{rows[1]}] - (int64_t)A1_pos[{rows[0]}] > S1_idx_cap" in c or \
            f"(int64_t)A1_pos[{rows[1]}] - (int64_t)A1_pos[{rows[0]}] > S0_idx0_cap" in c
    else:
        assert f"for (int64_t r = 0; r < {len(range(*rows))}; r++)" in c
        assert "if (n_kept > S_val_cap)" in c


def test_what_may_keep_few_entries_or_computes_values_reserves_nothing():
    # (a column slice of CSR, a row slice of COO: no count of what they keep)
    for program, fmt in (("S[i, k] = slice(A[i, j], j -> k, (0, 4, 2))", "csr"),
                         ("S[k, i] = slice(A[j, i], j -> k, (0, 3, 2))", "coo")):
        k, _ = check(program, "csr", A=(A, fmt, 0.0))
        assert "else the loops grow it as they go" not in k.c_source
    k, _ = check("c[k] = collapse(A[i, j], (i, j) -> k) + 1", "sparse", A=(A, "csr", 0.0))
    assert "else the loops grow it as they go" not in k.c_source   # (a constant: written where none is stored)
    csr, dense = parse_format("csr"), parse_format("dense", ndim=2)
    assert entry_bound(parse(VST), {"A": csr, "B": dense}, Namer()) is None   # (a dense operand: no entry count)
    assert stored_entries("A", parse_format("dcsr")) is None                  # (sparse over sparse)
    assert str(stored_entries("A", parse_format("coo"))) == "(int64)A0_pos[1]"


@pytest.mark.parametrize("program,fmt", [("S[k, i] = slice(A[j, i], j -> k, (5, -1, -2))", "csr"),
                                         ("S[k, i] = slice(A[j, i], j -> k, (1, 5, 1))", "csr"),
                                         (VST, "coo")])
def test_the_counting_loop_and_the_hint_in_a_bounds_checked_build_and_the_interpreter(program, fmt):
    # (the counting loop reads the kept rows' positions only; the interpreter runs it, skipping the hint)
    a = ss.Tensor.from_numpy(np.vstack([A, B]), "csr")
    tensors = {"A": a, "B": a} if "B[" in program else {"A": a}
    k = check_lowered(program, out=fmt, checked=True, strategy="looplets", **tensors)
    assert "else the loops grow it as they go" in k.c_source
