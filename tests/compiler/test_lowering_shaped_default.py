"""lower() given no strategy on index notation with shape operators: an input the lattice walks
against its storage order is read converted where looplets would gather it or refuse the
statement, and left to looplets where they walk it as stored (issue 30). Against numpy and the
dense oracle. On main the concat and the collapse of a CSC went to looplets (gathering) or were
refused by both: the first two tests fail there."""

import re

import numpy as np
import scipy.sparse as sp
import pytest

import compiler as ss
from compiler import array as xa
from compiler.format import Format, parse_format
from compiler.backend import clear_memory_cache, reset_stats, stats
from compiler.lowering import LONG_LATTICE, clear_cache
from compiler.reference import evaluate

FILLS = (0.0, np.nan, np.inf)


def data(shape, fill, seed):
    r = np.random.default_rng(seed)
    return np.where(r.random(shape) < 0.5, r.choice([1.0, -2.0, 3.5], shape), fill)


def check(prog, want, **tensors):
    kernel = ss.lower(prog, **tensors)
    got = kernel(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(prog, **tensors)[0], want)
    return kernel


@pytest.mark.parametrize("fill", FILLS)
def test_a_csc_concatenated_row_major_is_read_converted_where_looplets_would_gather_it(fill):
    a, b = data((4, 5), fill, 1), data((3, 5), fill, 2)
    a[:, 4], b[1, 2] = fill, np.inf     # (an empty column; a stored inf)
    A, B = ss.Tensor.from_numpy(a, "csc", fill=fill), ss.Tensor.from_numpy(b, "csr", fill=fill)
    kernel = check("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)", np.concatenate([a, b]), A=A, B=B)
    (step,) = kernel.trace.find("strategy")
    assert kernel.strategy == "lattice" and step.data == {"strategy": "lattice"}
    assert step.note.startswith("shape operators: lowered with the lattice strategy, A read as csr, converted "
                                "before each call (A.asformat, a counting sort, O(nnz + extent))"), step.note
    assert "looplets would gather A (A[k, j]: its level 1 (SparseList) is indexed by k" in step.note
    assert kernel.trace.find("convert") and not kernel.trace.find("gather")
    # given looplets: their kernel, its gather in the trace
    kernel = ss.lower("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)", strategy="looplets", A=A, B=B)
    assert "A located at each coordinate the loops visit" in kernel.trace.find("gather")[0].note
    np.testing.assert_array_equal(kernel(A=A, B=B).to_numpy(), np.concatenate([a, b]))


def test_a_csc_collapsed_row_major_is_read_converted_where_looplets_refuse_it():
    # (refused by both before: the lattice without converting, looplets for the discordant walk. Alone,
    # looplets now walk A column by column, writing out of order; beside a sparse b, b copied whole and
    # A's entries added in (or b copied into a dense workspace, for a product); summed beside a sparse
    # b, which they would read out of order, they still refuse)
    a, b = data((4, 5), 0.0, 3), data(20, 0.0, 4)
    A, B = ss.Tensor.from_numpy(a, "csc"), ss.Tensor.from_numpy(b, "sparse_vector")
    kernel = check("out[] = sum[k](collapse(A[i, j], (i, j) -> k) * b[k])", (a.reshape(-1) * b).sum(), A=A, b=B)
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "lattice" and "and looplets refuse the statement (collapse(A[i, j]" in note, note
    for op, want, stage in (("+", a.reshape(-1) + b, "copy-scatter"), ("*", a.reshape(-1) * b, "copy")):
        kernel = check(f"out[k] = collapse(A[i, j], (i, j) -> k) {op} b[k]", want, A=A, b=B)
        assert kernel.strategy == "looplets" and kernel.trace.find(stage) and not kernel.trace.find("gather")
    kernel = check("out[k] = collapse(A[i, j], (i, j) -> k)", a.reshape(-1), A=A)
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "looplets" and "the lattice strategy refused this statement" in note, note
    assert kernel.trace.find("walk-reshape") and not kernel.trace.find("gather"), kernel.trace
    # an empty one
    e = np.zeros((0, 3))
    check("out[k] = collapse(A[i, j], (i, j) -> k)", e.reshape(-1), A=ss.Tensor.from_numpy(e, "csc"))


def test_a_column_major_dense_operand_is_left_to_looplets_which_locate_it_in_place():
    # its levels are located, not searched: no gather, so no conversion (the lattice's refusal named)
    a = data((4, 5), 0.0, 4)
    A = ss.Tensor.from_numpy(a, Format(parse_format("dense", ndim=2).root, (1, 0)))
    B = ss.Tensor.from_numpy(data((2, 5), 0.0, 5), "csr")
    kernel = check("out[i, j] = concat((A[k, j], B[l, j]), (k, l) -> i)",
                   np.concatenate([a, B.to_numpy()]), A=A, B=B)
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "looplets" and note.startswith("shape operators: the lattice strategy refused this "
                                                             "statement (A[k, j]: the loops reach its level 1"), note
    assert not kernel.trace.find("gather")


@pytest.mark.parametrize("fill", (0.0, np.nan))
def test_a_csr_sliced_with_a_positive_stride_is_walked_so_its_partner_is_left_to_looplets(fill):
    # a CSR's columns sliced with step 2 are walked (each step seeks on from the last), no gather:
    # the column-major dense operand the lattice would convert is located in place by looplets
    # (on main the strided slice counted as a gather, and the dense operand was converted)
    a, d = data((4, 9), fill, 6), data((4, 5), fill, 7)
    A = ss.Tensor.from_numpy(a, "csr", fill=fill)
    D = ss.Tensor.from_numpy(d, Format(parse_format("dense", ndim=2).root, (1, 0)), fill=fill)
    prog = "out[i, k] = slice(A[i, j], j -> k, (0, 9, 2)) + D[i, k]"
    kernel = check(prog, a[:, ::2] + d, A=A, D=D)
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "looplets" and "the lattice strategy refused this statement" in note, note
    assert not kernel.trace.find("gather") and not kernel.trace.find("convert")
    if fill != 0:
        return      # (the lattice takes fill 0 only where the result computes with the entries)
    # a negative stride restarts the walk at each column: a gather, so the lattice converts D
    kernel = check(prog.replace("(0, 9, 2)", "(8, -1, -2)"), a[:, ::-2] + d, A=A, D=D)
    note = kernel.trace.find("strategy")[0].note
    assert kernel.strategy == "lattice" and "looplets would gather A (A[i, t + (8 + k * -2)]" in note, note


def four_parts_reshaped(shape):
    inf = np.inf
    values = [np.ones((3, 3)), np.array([[0.0, 0.0, -2.0], [1.0, inf, inf], [inf, 1.0, 1.0]]),
              np.array([[1.0], [-2.0], [1.0]]), np.array([[1.0], [-2.0], [np.nan]])]
    parts = [xa.asarray(ss.Tensor.from_numpy(v, f, fill=1.0) if f != "dense" else v)
             for v, f in zip(values, ["dcsr", "dcsr", "coo", "dense"])]
    return xa.reshape(xa.concat(parts, axis=1), shape), np.concatenate(values, axis=1).reshape(shape)


def test_a_long_lattice_kernel_is_left_to_the_looplets_where_theirs_is_half_as_long(monkeypatch):
    # (linalg.cross of a COO and a CSC matrix: each of the CSC's columns a walk of its rows, 3,941 lines of C; the
    # looplets' about 240. The limit lowered below it: the splits of hstacks that were longer than the limit, 7,140
    # and 18,591 lines, are now merged loops of 409 and 501; the columns of two CSR or two COO matrices are located
    # in each row, 246 and 329 lines)
    from compiler import lowering
    monkeypatch.setattr(lowering, "LONG_LATTICE", 1000)
    a = sp.random(6, 3, density=0.5, format="coo", random_state=3)
    b = sp.random(6, 3, density=0.5, format="csc", random_state=4)
    expr = xa.linalg.cross(ss.asarray(a), ss.asarray(b))
    clear_cache()
    clear_memory_cache()
    reset_stats()
    kernel = ss.lower(expr)
    # the lattice's C was left before it was compiled: the one kernel built is the looplets' (each C emitted once,
    # by the lowering, which compares their lengths: compile_function is given it and emits none)
    counts = stats()
    assert counts["emits"] == 0 and counts["compiles"] + counts["disk_hits"] == 1, counts
    assert kernel.strategy == "looplets"
    (step,) = kernel.trace.find("strategy")
    lines = int(re.search(r"the lattice strategy's kernel is ([\d,]+) lines of C", step.note)[1].replace(",", ""))
    assert lines > 1000 and kernel.c_source.count("\n") * 2 <= lines and "strategy='lattice'" in step.note
    np.testing.assert_array_equal(kernel().to_numpy(), np.cross(a.toarray(), b.toarray()))
    lattice = ss.lower(expr, strategy="lattice")
    assert lattice.strategy == "lattice" and lattice.c_source.count("\n") == lines
    np.testing.assert_array_equal(lattice().to_numpy(), np.cross(a.toarray(), b.toarray()))
    # the lattice's kernel compiled, a second lowering given no strategy still gives the looplets'
    assert ss.lower(expr).c_source == kernel.c_source


def test_a_split_of_four_parts_into_rows_is_the_lattices_merged_loops():
    # (its lattice was 7,140 lines of C, left to the looplets' 1,157: the loops over the groups and within each now
    # merge, compiler.lattice.seqcfir.Compiler.merged_split)
    expr, want = four_parts_reshaped((4, 6))
    kernel = ss.lower(expr)
    assert kernel.strategy == "lattice" and kernel.c_source.count("\n") < 600, kernel.c_source.count("\n")
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kernel().to_numpy(), want)


def test_a_short_lattice_kernel_stays_the_lattices():
    expr, want = four_parts_reshaped((3, 8))
    kernel = ss.lower(expr)
    assert kernel.strategy == "lattice" and kernel.c_source.count("\n") <= LONG_LATTICE
    np.testing.assert_array_equal(kernel().to_numpy(), want)


def test_a_looplets_kernel_not_half_as_long_is_left_before_it_is_compiled(monkeypatch):
    # (the limit lowered so that a short hstack's lattice kernel is long: the looplets' kernel, lowered and emitted
    # to compare, is not half as long, and is not built by GCC either; before, it was compiled and dropped)
    from compiler import lowering
    monkeypatch.setattr(lowering, "LONG_LATTICE", 10)
    expr, want = four_parts_reshaped((3, 8))
    clear_cache()
    clear_memory_cache()
    reset_stats()
    kernel = ss.lower(expr)
    counts = stats()
    assert kernel.strategy == "lattice"
    assert counts["emits"] == 0 and counts["compiles"] + counts["disk_hits"] == 1, counts
    looplets = ss.lower(expr, strategy="looplets")
    assert looplets.c_source.count("\n") * 2 > kernel.c_source.count("\n")   # (the premise)
    np.testing.assert_array_equal(kernel().to_numpy(), want)


def emitted_by(monkeypatch) -> list:
    """The kernels whose C the lowering emits (a spy on lowering.emit_c_with_provenance): their names."""
    from compiler import lowering
    names, emit = [], lowering.emit_c_with_provenance

    def spy(fn, *args, **kwargs):
        names.append(fn.name)
        return emit(fn, *args, **kwargs)
    monkeypatch.setattr(lowering, "emit_c_with_provenance", spy)
    return names


@pytest.mark.parametrize("y", [[[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]], [[0.0, 3.0, -1.0], [2.0, 0.0, 0.0]]])
def test_a_long_lattice_cfir_is_left_to_the_looplets_before_its_c_is_emitted(monkeypatch, y):
    # (linalg.cross of a COO and a CSC matrix: the CSC's columns each a walk of its rows, a CFIR making at least 124
    # lines of C, 3,941 in all; the looplets' about 240. No statement found makes a CFIR longer than the limit since
    # the columns of a COO matrix walk its rows once (a lattice of 63 points, 3,598 lines, for two COO matrices):
    # the CFIR's count taken ten times over stands in for one)
    from compiler.lattice import seqcfir
    from compiler.lowering import LONG_CFIR
    count = seqcfir.c_lines_at_least
    monkeypatch.setattr(seqcfir, "c_lines_at_least", lambda s: 10 * count(s))
    x = np.arange(6.0).reshape(2, 3) - 2.0
    y = np.array(y)
    expr = xa.linalg.cross(ss.asarray(x, format="coo"), ss.asarray(y, format="csc"))
    clear_cache()
    emitted = emitted_by(monkeypatch)
    kernel = ss.lower(expr)
    assert kernel.strategy == "looplets" and len(emitted) == 1, emitted   # (the looplets' C alone)
    (step,) = kernel.trace.find("strategy")
    lines = int(re.search(r"the lattice strategy's sequence CFIR is ([\d,]+) lines", step.note)[1].replace(",", ""))
    assert lines > LONG_CFIR and kernel.c_source.count("\n") * 2 <= lines and "strategy='lattice'" in step.note
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kernel().to_numpy(), np.cross(x, y))


@pytest.mark.parametrize("fill", [0.0, np.nan])
@pytest.mark.parametrize("fmt, walked", [("coo", 1), ("csr", 1)])
def test_a_cross_product_with_a_vector_walks_each_column_of_the_matrix_once(fill, fmt, walked):
    # (b[c] is at a constant coordinate, found before the loops: a product with it moves no cursor of A, and A[i, 1],
    # read in two parts of the stack, binds no index of either; each of A's columns was read through its own copy,
    # six walks of its rows, 63 points, 4,089 lines of CFIR; with NaN among its values, three, a lattice of 7 points.
    # A CSR matrix's column is located in each row, walked by no sequence: one point, every row; a COO's in the row
    # its walk of the rows is at, the walks folded to one: one point, the rows of A)
    x = np.array([[1.0, 0.0, -2.0], [0.0, 3.0, 4.0], [0.0, 0.0, 0.0]])
    x[0, 1] = fill
    y = np.array([1.0, -2.0, 0.5])
    kernel = ss.lower(xa.linalg.cross(ss.asarray(x, format=fmt), y), strategy="lattice")
    points = [s.note for s in kernel.trace.find("lattice") if s.note.startswith("forall i:")]
    assert points == [f"forall i: {walked} point(s)"], points
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(kernel().to_numpy(), np.cross(x, y))


def test_a_looplets_kernel_not_half_as_long_as_the_cfir_is_lowered_once(monkeypatch):
    # (the limits lowered so that a short hstack's lattice CFIR and C are both long: the looplets' kernel, lowered
    # for the CFIR, is not half as long; the lattice's C is then emitted, and the looplets' not lowered again)
    from compiler import lowering
    monkeypatch.setattr(lowering, "LONG_CFIR", 5)
    monkeypatch.setattr(lowering, "LONG_LATTICE", 10)
    expr, want = four_parts_reshaped((3, 8))
    clear_cache()
    emitted = emitted_by(monkeypatch)
    kernel = ss.lower(expr)
    assert kernel.strategy == "lattice"
    assert len(emitted) == 2, emitted   # (the looplets' once, the lattice's once)
    np.testing.assert_array_equal(kernel().to_numpy(), want)
