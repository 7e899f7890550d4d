"""Output formats under the looplets strategy: levels nested under an appended level (DCSR, CSF,
a sparse-over-dense SparseList(Dense), a SparseHash under a SparseHash) and sparse outputs whose
loops run out of their storage order (a CSC sum of CSR inputs, a transpose into CSR), issue 29 item 3.

Each kernel is checked against the dense oracle (``compiler.evaluate``), the IR interpreter,
and the storage ``Tensor.from_numpy`` builds for the format (sorted, unique coordinates,
monotone ``pos``, no stored entry or row of fills), the sums', reductions' and transposes' against a
bounds-checked build too; the suite validates every output too (SPARSESCOPE_VALIDATE_OUTPUTS).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor
from compiler.looplets import ProgramError
from compiler.format import Format, parse_format
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseInterval, SparseList, SparsePoint, SparseRunList)
from compiler.looplets import Scalar, compile_program, loop_program
from compiler.testing import assert_canonical, check_lowered, random_sparse


def sparse_over_dense(fill=0.0, ndim=2):
    """Rows sparse, each stored row dense (``SparseList(Dense)``; 3-d: ``SparseList(SparseList(Dense))``)."""
    leaf = Dense(Element(fill))
    return Format(SparseList(leaf) if ndim == 2 else SparseList(SparseList(leaf)))


def hash_of_hashes(fill=0.0, ndim=2):
    """``SparseHash(SparseHash)`` (3-d: under a Dense level): each level written at random."""
    inner = SparseHash(SparseHash(Element(fill)))
    return Format(inner if ndim == 2 else Dense(inner))


def out_format(name, fill=0.0, ndim=2):
    if name == "sl-hash":   # (rows appended in order, each row's coordinates inserted at random)
        inner = SparseHash(Element(fill))
        return Format(SparseList(inner) if ndim == 2 else SparseList(SparseList(inner)))
    if name == "sl-dense":
        return sparse_over_dense(fill, ndim)
    if name == "hash-hash":
        return hash_of_hashes(fill, ndim)
    return parse_format(name, ndim=ndim, fill=fill)


def matrices(seed=0, shape=(5, 6), fill=0.0, empty=(2,)):
    rng = np.random.default_rng(seed)
    return [random_sparse(shape, 0.4, rng, fill=fill, empty=empty) for _ in range(2)]


def assert_stored(got, want):
    """``got`` holds ``want`` as Tensor.from_numpy stores it; a hash level's keys, table and
    child positions follow the order of the kernel's writes, so there the values, a validation
    and the outermost hash's sorted view (pos, idx) are compared."""
    if not any(lvl.inserts_nested for lvl in got.levels):
        return assert_canonical(got, want)
    np.testing.assert_array_equal(got.to_numpy(), want)
    got.validate()
    k = next(k for k, lvl in enumerate(got.levels) if lvl.inserts_nested)
    w = Tensor.from_numpy(want, got.format).levels[k]
    for kind in ("pos", "idx"):
        np.testing.assert_array_equal(got.levels[k].arrays()[kind], w.arrays()[kind], err_msg=f"{w.name}.{kind}")


#: the products and copies, whose kernels are not also built bounds-checked: they assemble the same output
#: levels as the sums' (each checked) with a subset of a sum's entries, and a bounds-checked build is a second
#: lowering and C build (as tests/compiler/lattice/output_cases.BOUNDS_CHECKED)
PRODUCTS_AND_COPIES = frozenset({"C[i, j] = A[i, j] * B[i, j]", "C[i, j] = A[i, j]",
                                 "C[i, j, k] = X[i, j, k] * Y[i, j, k]"})


def check(expr, out, **tensors):
    """The kernel, its interpretation and a bounds-checked build (but for PRODUCTS_AND_COPIES) agree
    with the oracle, and the output is stored as Tensor.from_numpy stores it."""
    k = check_lowered(expr, out=out, strategy="looplets", checked=expr not in PRODUCTS_AND_COPIES, **tensors)
    got = k(**tensors)
    asked = parse_format(out) if isinstance(out, str) else out
    assert [lvl.name for lvl in got.format.levels] == [lvl.name for lvl in asked.levels]
    assert got.format.mode_order == asked.mode_order
    assert_stored(got, ss.evaluate(expr, **tensors)[0])
    return k


NESTED = ["dcsr", "sl-dense", "hash-hash", "sl-hash"]


@pytest.mark.parametrize("out", NESTED)
@pytest.mark.parametrize("expr", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]",
                                  "C[i, j] = A[i, j]", "C[i, j] = A[i, k] * D[k, j]"])
def test_nested_outputs_match_the_oracle(out, expr):
    # before: "cannot assemble level 1 (SparseList) under level 0 (SparseList)" for DCSR,
    # "... level 1 (Dense) under level 0 (SparseList)" for SparseList(Dense) and "a SparseHash
    # output level needs Dense levels above it and a leaf below it" for SparseHash(SparseHash)
    a, b = matrices()
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "dcsr")
    D = Tensor.from_numpy(random_sparse((6, 4), 0.5, np.random.default_rng(3)), "csr")
    used = {n: t for n, t in (("A", A), ("B", B), ("D", D)) if f"{n}[" in expr}
    check(expr, out_format(out), **used)


@pytest.mark.parametrize("out", ["csf", "sl-dense", "hash-hash", "sl-hash"])
def test_three_levels_nested(out):
    rng = np.random.default_rng(1)
    x = random_sparse((3, 4, 5), 0.3, rng, empty=(1,))
    y = random_sparse((3, 4, 5), 0.3, rng, empty=(1,))
    X, Y = Tensor.from_numpy(x, "csf"), Tensor.from_numpy(y, "csf")
    fmt = out_format(out, ndim=3)
    check("C[i, j, k] = X[i, j, k] + Y[i, j, k]", fmt, X=X, Y=Y)
    check("C[i, j, k] = X[i, j, k] * Y[i, j, k]", fmt, X=X, Y=Y)


def test_dcsr_output_drops_rows_written_only_with_the_fill():
    # a row the loops enter but whose values cancel (a + (-a)) stores nothing, as from_numpy
    a = np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    A, N = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(-a * np.array([[1.0], [0.0], [1.0]]), "csr")
    for out in NESTED:
        k = check("C[i, j] = A[i, j] + N[i, j]", out_format(out), A=A, N=N)
        assert k(A=A, N=N).levels[0].idx.tolist() == [1]


@pytest.mark.parametrize("inputs", ["csr", "csc"])
@pytest.mark.parametrize("expr", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = A[i, j] * B[i, j]", "C[i, j] = A[i, j]",
                                  "C[j, i] = A[i, j]", "C[i, j] = A[i, k] * B[j, k]"])
def test_csc_output_of_index_notation(inputs, expr):
    # before: "output C is written out of order: its SparseList level (storage level 1) is
    # appended in index order, so the loops around this write must be j, i"
    a, b = matrices(seed=4)
    A, B = Tensor.from_numpy(a, inputs), Tensor.from_numpy(b, inputs)
    used = {n: t for n, t in (("A", A), ("B", B)) if f"{n}[" in expr}
    k = check(expr, "csc", **used)
    (step,) = k.trace.find("output-order") or [None]
    if step is not None:   # the choice is recorded: reordered loops, or a built CSR converted
        assert "C is csc" in step.note


def test_output_order_reorders_loops_when_the_inputs_allow_it():
    a, b = matrices(seed=5)
    A, B = Tensor.from_numpy(a, "csc"), Tensor.from_numpy(b, "csc")
    k = check("C[i, j] = A[i, j] + B[i, j]", "csc", A=A, B=B)
    (step,) = k.trace.find("output-order")
    assert "the loops run j, i" in step.note and not k.lowered.conversions


def test_output_order_scatters_the_output_when_the_inputs_disagree():
    # (issue 29: built in its own order by a two-phase scatter, where it was built as CSR and
    # converted after each call; compiler.looplets.scatter, tests/compiler/looplets/test_looplets_scatter.py)
    a, b = matrices(seed=6)
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    k = check("C[i, j] = A[i, j] + B[i, j]", "csc", A=A, B=B)
    (step,) = k.trace.find("output-order")
    assert "by a scatter, not in the loops' order converted after the call" in step.note
    assert k.lowered.conversions == () and [s.data["phase"] for s in k.trace.find("scatter")] == ["count", "store"]
    # (the shorthand "csc" leaves the index dtype to the lowering: int32 here, as scipy's)
    assert k(A=A, B=B).format == parse_format("csc", index_dtype="int32")


@loop_program
def scatter_transpose(C, A):
    for i in _:
        for j in _:
            C[j, i] += A[i, j]


def test_hash_of_hashes_takes_writes_in_any_order():
    # each level inserts at random: the transpose's loops need no order and no conversion
    a, _ = matrices(seed=8)
    A = Tensor.from_numpy(a, "csr")
    k = compile_program(scatter_transpose, C=hash_of_hashes(), A=A)
    assert_stored(k(A=A), a.T)
    assert not k.trace.find("output-order") and not k.lowered.conversions


@loop_program
def transpose(B, A):
    B[...] = 0.0
    for i in _:
        for j in _:
            B[j, i] = A[i, j]


@loop_program
def transposed_sum(C, A, B):
    C[...] = 0.0
    for i in _:
        for j in _:
            C[j, i] = A[i, j] + B[i, j]


@pytest.mark.parametrize("out", ["csr", "dcsr", "sl-dense"])
def test_loop_program_transpose_into_row_major_output(out):
    # before: "output B is written out of order ... the loops around this write must be j, i"
    a, b = matrices(seed=7)
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    fmt = out_format(out)
    k = compile_program(transpose, B=fmt, A=A)
    assert_canonical(k(A=A), a.T)
    np.testing.assert_array_equal(k.interpret(A=A).to_numpy(), a.T)
    # (a CSR or DCSR output scattered in the program's loop order, a SparseList(Dense) one converted)
    assert "loops run i, j" in k.trace.find("output-order")[0].note
    assert bool(k.trace.find("scatter")) == (out != "sl-dense") and bool(k.lowered.conversions) == (out == "sl-dense")
    k = compile_program(transposed_sum, C=fmt, A=A, B=B)
    assert_canonical(k(A=A, B=B), (a + b).T)


FILLS = [0.0, 1.0, float("nan"), float("inf")]
OPS = {"sum": ("C[i, j] = A[i, j] + B[i, j]", np.add), "product": ("C[i, j] = A[i, j] * B[i, j]", np.multiply),
       "copy": ("C[i, j] = A[i, j]", lambda x, y: x), "transpose": ("C[j, i] = A[i, j]", lambda x, y: x)}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(out=st.sampled_from(["dcsr", "sl-dense", "hash-hash", "sl-hash", "csc", "csr"]),
       ins=st.sampled_from(["csr", "csc", "dcsr"]),
       op=st.sampled_from(sorted(OPS)), fill=st.sampled_from(FILLS), m=st.integers(0, 5), n=st.integers(0, 6),
       density=st.sampled_from([0.0, 0.3, 1.0]), seed=st.integers(0, 3))
@example(out="dcsr", ins="csr", op="sum", fill=float("nan"), m=3, n=4, density=0.0, seed=0)   # all fill
@example(out="sl-dense", ins="csr", op="product", fill=1.0, m=4, n=3, density=1.0, seed=1)   # no fill stored
@example(out="csc", ins="csr", op="sum", fill=float("inf"), m=0, n=3, density=0.3, seed=0)   # empty
def test_output_formats_property(out, ins, op, fill, m, n, density, seed):
    expr, f = OPS[op]
    rng = np.random.default_rng(seed)
    shape = (m, n)
    a = random_sparse(shape, density, rng, fill=fill, empty=(0,) if m > 1 else ())
    b = random_sparse(shape, density, rng, fill=fill)
    A, B = Tensor.from_numpy(a, ins), Tensor.from_numpy(b, ins)
    used = {"A": A, "B": B} if "B[" in expr else {"A": A}
    want = ss.evaluate(expr, **used)[0]
    with np.errstate(invalid="ignore"):
        out_fill = float(f(np.float64(fill), np.float64(fill)))
    k = ss.lower(expr, strategy="looplets", C=out_format(out, out_fill), **used)
    got = k(**used)
    assert_stored(got, want)
    np.testing.assert_array_equal(k.interpret(**used).to_numpy(), want)


# ------------------------------------------------------------------------- nestings through a stand-in


KINDS = {"Dense": Dense, "SparseList": SparseList, "SparseBand": SparseBand, "SparseBlockList": SparseBlockList,
         "SparseInterval": SparseInterval, "SparsePoint": SparsePoint, "RunList": RunList,
         "SparseRunList": SparseRunList, "SparseByteMap": SparseByteMap, "SparseHash": SparseHash}
#: the two-level outputs the looplets strategy assembles itself (every level under Dense; under a sparse
#: level: SparseList under SparseList, Dense to the leaf under SparseList or SparseByteMap, and a
#: hash under a hash or a SparseList); every other nesting it builds through a SparseList stand-in
ASSEMBLED = {("Dense", k) for k in KINDS} | {("SparseList", "SparseList"), ("SparseList", "Dense"),
                                             ("SparseByteMap", "Dense"), ("SparseHash", "SparseHash"),
                                             ("SparseList", "SparseHash"), ("SparseList", "SparseInterval"),
                                             ("SparseList", "SparseRunList")}
#: the nestings with a level that holds at most one entry per fiber (the others, with sums and products:
#: tests/compiler/looplets/test_output_nestings.py)
AT_MOST_ONE = [(o, i) for o in KINDS for i in KINDS if {"SparsePoint", "SparseInterval"} & {o, i}]


@pytest.mark.parametrize("outer, inner", AT_MOST_ONE)
def test_every_two_level_nesting_with_a_point_or_interval_is_assembled(outer, inner):
    # before: those not in ASSEMBLED were refused (e.g. "level 1 (SparseList) under level 0 (SparsePoint)",
    # "a SparseInterval output level needs Dense levels above it and an Element leaf"); now built through a
    # SparseList stand-in converted after each call. (One stored value: a SparsePoint or SparseInterval fiber
    # holds it wherever it is.)
    m = np.zeros((4, 5))
    m[1, 2] = 3.0
    A = Tensor.from_numpy(m, "csr")
    fmt = Format(KINDS[outer](KINDS[inner](Element(0.0))))
    k = ss.lower("C[i, j] = A[i, j]", strategy="looplets", C=fmt, A=A)
    assert_stored(k(A=A), m)
    converts = [s.note for s in k.trace.steps if s.stage == "convert"]
    assert bool(converts) == ((outer, inner) not in ASSEMBLED)
    if converts:
        assert converts[0].startswith("C is ") and "the looplets strategy assembles no level" in converts[0]


def one_per_column(m, n, runs, rng):
    """An m x n matrix of at most one entry per column (one run of equal values down it, ``runs``), where
    a row may hold several."""
    a = np.zeros((m, n))
    for j in range(n):
        if m and rng.random() < 0.7:
            r = int(rng.integers(0, m))
            a[r:r + (int(rng.integers(1, 3)) if runs else 1), j] = float(rng.integers(1, 4))
    return a


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(level=st.sampled_from(["SparsePoint", "SparseInterval"]), op=st.sampled_from(["copy", "sum"]),
       m=st.integers(0, 5), n=st.integers(0, 5), seed=st.integers(0, 2 ** 16))
@example(level="SparsePoint", op="copy", m=3, n=3, seed=1)   # (a row holds two)
@example(level="SparseInterval", op="sum", m=4, n=4, seed=2)   # (a row holds two)
def test_a_transposed_output_of_at_most_one_entry_per_fiber(level, op, m, n, seed):
    """``Dense(SparsePoint)`` / ``Dense(SparseInterval)`` stored by columns (mode order (1, 0)) of row-order
    loops: built in the loops' order and converted, its level of at most one entry per column is built as a
    SparseList (a row may hold two; built in the same levels, the output failed its check)."""
    a = one_per_column(m, n, level == "SparseInterval", np.random.default_rng(seed))
    expr = OPS[op][0]
    used = {"A": Tensor.from_numpy(a, "csr"), **({"B": Tensor.from_numpy(2 * a, "csr")} if op == "sum" else {})}
    fmt = Format(Dense(KINDS[level](Element(0.0))), (1, 0))
    k = ss.lower(expr, strategy="looplets", C=fmt, **used)
    assert_stored(k(**used), ss.evaluate(expr, **used)[0])
    note = next(s.note for s in k.trace.steps if s.stage == "output-order")
    assert f"its level 1 ({level}) as a SparseList" in note


@loop_program
def hstack_by_rows(D, A, B):
    for i in _:
        for j in _:
            D[:, :3][i, j] = A[i, j]
        for j in _:
            D[:, 3:][i, j] = B[i, j]


@loop_program
def row_twice(D, A, B):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
        for j in _:
            D[i, j] = B[i, j]


def test_two_loops_appending_one_row_of_a_dcsr_output():
    # before: each loop over j appended row i to DCSR's outer level (and its row fibers were not
    # checked), so the kernel returned row i twice, its coordinates unsorted (found reviewing appends);
    # then both were refused. Now row i is appended once, each loop writing its part of the row's
    # fiber in turn (compiler.looplets.lowerers): a concatenation, checked at every call, as into CSR
    a, b = (random_sparse((4, 3), 0.5, np.random.default_rng(s), empty=(2,)) for s in (10, 11))
    A, B = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(b, "csr")
    for out in ("dcsr", sparse_over_dense(), "csr"):
        k = compile_program(hstack_by_rows, D=Tensor.from_numpy(np.zeros((4, 6)), out), A=A, B=B)
        assert_canonical(k(A=A, B=B), np.hstack([a, b]))
    # two loops over the same columns of one row: refused where the row is a sorted fiber ...
    for out in ("dcsr", "csr"):
        with pytest.raises(ProgramError, match=r"output D is written by two loops over j \(lines \d+ and \d+\) into "
                                               r"one fiber of its SparseList level \(storage level 1\), .* both loops "
                                               r"start at j = 0"):
            compile_program(row_twice, D=out, A=A, B=B)
    # ... and right into a dense row of a SparseList(Dense): B written over all of A, its fills too (it
    # kept A's entries where B stores none: the fill-write rule dropped B's fills; compiler.looplets.overwrites)
    for run in (lambda k: k(A=A, B=B), lambda k: k.interpret(A=A, B=B)):
        assert_canonical(run(compile_program(row_twice, D=Tensor.from_numpy(np.zeros((4, 3)), sparse_over_dense()),
                                             A=A, B=B)), b)


@loop_program
def scaled_transpose(B, A, t=Scalar(0.0)):
    t[...] = 0.0
    for i in _:
        for j in _:
            t += A[i, j]
    for i in _:
        for j in _:
            B[j, i] = A[i, j] * t


def test_a_program_with_a_temporary_writes_its_output_out_of_order_too():
    # before: the temporary t counted as a second tensor written, so no output was chosen and the
    # transpose into CSR was refused as out of order
    a, _ = matrices(seed=12)
    A = Tensor.from_numpy(a, "csr")
    k = compile_program(scaled_transpose, B="csr", A=A)
    assert_canonical(k(A=A), a.T * a.sum())
    assert k.lowered.conversions
