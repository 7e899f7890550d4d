"""Run-length outputs: RunList and SparseRunList levels written through AcceptRun.

The oracle is twofold: the values (numpy on the dense images) and the storage itself,
which must be the canonical one ``Tensor.from_numpy`` builds (maximal runs, equal
neighbours merged, no stored fill runs in a SparseRunList).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Trace, Tensor, evaluate, lower
from compiler.format import Format
from compiler.levels import Dense, Element, RunList, SparseList, SparseRunList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.looplets.gallery import concat
from compiler.testing import assert_canonical

nan, inf = np.nan, np.inf


def rle_image(rng, h, w, max_run=5, values=4):
    img = np.zeros((h, w))
    for r in range(h):
        c = 0
        while c < w:
            run = int(rng.integers(1, max_run))
            img[r, c:c + run] = rng.integers(0, values)
            c += run
    return img


@loop_program
def blend(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = 0.5 * A[i, j] + 0.25 * B[i, j]


@loop_program
def scale_columns(C, A, x):
    for i in _:
        for j in _:
            C[i, j] = A[i, j] * x[j]


OUTPUTS = {"RunList": lambda f=0.0: Dense(RunList(Element(f))),
           "SparseRunList": lambda f=0.0: Dense(SparseRunList(Element(f)))}


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("la,lb", [(RunList, RunList), (RunList, SparseRunList), (SparseRunList, SparseList)])
def test_blend_into_run_length_outputs(out, la, lb):
    rng = np.random.default_rng(7)
    a, b = rle_image(rng, 7, 23), rle_image(rng, 7, 23)
    A, B = Tensor.from_numpy(a, Dense(la(Element(0.0)))), Tensor.from_numpy(b, Dense(lb(Element(0.0))))
    for checked in (False, True):
        k = compile_program(blend, C=OUTPUTS[out](), A=A, B=B, checked=checked)
        assert_canonical(k(A=A, B=B), 0.5 * a + 0.25 * b)


def test_runs_in_runs_out_write_once_per_run():
    """Both inputs run-length: the body is lowered once per region, so no loop visits pixels,
    and the trace says the output took whole runs."""
    rng = np.random.default_rng(1)
    a, b = rle_image(rng, 4, 40), rle_image(rng, 4, 40)
    A, B = (Tensor.from_numpy(x, Dense(RunList(Element(0.0)))) for x in (a, b))
    trace = Trace()
    k = compile_program(blend, C=OUTPUTS["RunList"](), A=A, B=B, trace=trace)
    assert "for (int64_t j" not in k.c_source
    notes = [s.note for s in trace.steps if s.stage == "lower:AcceptRun"]
    assert notes and all("one run" in n for n in notes), notes
    assert_canonical(k(A=A, B=B), 0.5 * a + 0.25 * b)


@pytest.mark.parametrize("out", OUTPUTS)
def test_reads_that_change_per_index_write_runs_of_length_one_then_merge(out):
    """``x`` is dense: each index is its own region, and equal neighbours still merge."""
    rng = np.random.default_rng(2)
    a = rle_image(rng, 5, 17)
    x = np.where(rng.random(17) < 0.5, 1.0, 2.0)
    A = Tensor.from_numpy(a, Dense(RunList(Element(0.0))))
    trace = Trace()
    k = compile_program(scale_columns, C=OUTPUTS[out](), A=A, x=x, trace=trace)
    assert any("length one" in s.note for s in trace.steps if s.stage == "lower:AcceptRun")
    assert_canonical(k(A=A, x=x), a * x)


@pytest.mark.parametrize("out", OUTPUTS)
def test_rows_a_sieve_skips_are_all_fill(out):
    """Rows never written are one fill run (RunList, inserted when the output freezes) or
    empty (SparseRunList)."""
    @loop_program
    def masked_rows(C, m, A):
        for i in _:
            if m[i]:
                for j in _:
                    C[i, j] = A[i, j] + 1.0
    rng = np.random.default_rng(3)
    for mask in ([True, False, True, False, False, True], [False] * 6, [True] * 6, [False, True] + [False] * 4):
        a = rle_image(rng, 6, 9)
        m = np.array(mask)
        A = Tensor.from_numpy(a, Dense(SparseRunList(Element(0.0))))
        k = compile_program(masked_rows, C=OUTPUTS[out](), m=m, A=A, checked=True)
        assert_canonical(k(m=m, A=A), np.where(m[:, None], a + 1.0, 0.0))


def test_row_sums_reduce_into_a_run_length_vector():
    @loop_program
    def row_sums(y, A):
        y[...] = 0
        for i in _:
            for j in _:
                y[i] += A[i, j]
    rng = np.random.default_rng(4)
    a = rle_image(rng, 12, 10, values=2)
    a[3:7] = a[3]  # equal sums in a row of rows merge into one run
    A = Tensor.from_numpy(a, Dense(RunList(Element(0.0))))
    for fmt in (RunList(Element(0.0)), SparseRunList(Element(0.0))):
        k = compile_program(row_sums, y=fmt, A=A, checked=True)
        assert_canonical(k(A=A), a.sum(axis=1))


@pytest.mark.parametrize("out", OUTPUTS)
def test_a_non_zero_fill_is_a_run_like_any_other(out):
    """Fill 1.0 (a mask of ones): the product keeps ones outside the runs of the inputs."""
    @loop_program
    def product(C, A, B):
        for i in _:
            for j in _:
                C[i, j] = A[i, j] * B[i, j]
    rng = np.random.default_rng(5)
    a, b = 1.0 + rle_image(rng, 3, 15, values=2), 1.0 + rle_image(rng, 3, 15, values=2)
    A = Tensor.from_numpy(a, Dense(SparseRunList(Element(1.0))))
    B = Tensor.from_numpy(b, Dense(RunList(Element(1.0))))
    k = compile_program(product, C=OUTPUTS[out](1.0), A=A, B=B, checked=True)
    assert_canonical(k(A=A, B=B), a * b)


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (1, 1), (2, 6)])
def test_empty_and_all_fill_images(out, shape):
    for a in (np.zeros(shape), np.full(shape, 2.0)):
        A = Tensor.from_numpy(a, Dense(RunList(Element(0.0))))
        B = Tensor.from_numpy(np.zeros(shape), Dense(SparseRunList(Element(0.0))))
        k = compile_program(blend, C=OUTPUTS[out](), A=A, B=B, checked=True)
        assert_canonical(k(A=A, B=B), 0.5 * a)


def test_concatenation_into_a_sparse_run_list_by_two_loops():
    """Two loops may append to one SparseRunList fiber in order (its runs need not cover it)."""
    a, b = np.array([0, 2.0, 2, 0, 3]), np.array([3.0, 3, 0, 0])
    A = Tensor.from_numpy(a, SparseRunList(Element(0.0)))
    B = Tensor.from_numpy(b, RunList(Element(0.0)))
    k = compile_program(concat, C=Tensor.from_numpy(np.zeros(9), SparseRunList(Element(0.0))), A=A, B=B,
                        checked=True)
    out = k(A=A, B=B)
    np.testing.assert_array_equal(out.to_numpy(), np.r_[a, b])


def test_a_run_list_written_by_two_loops_is_refused():
    A = Tensor.from_numpy(np.ones(3), RunList(Element(0.0)))
    with pytest.raises(ProgramError, match=r"output C is written by two loops over i \(an earlier loop writes "
                                           r"it too\).*SparseRunList") as e:
        compile_program(concat, C=Tensor.from_numpy(np.zeros(6), RunList(Element(0.0))), A=A, B=A)
    assert "C[A.shape[0]:][i] = B[i]" in str(e.value)  # the error quotes the second write


def test_run_list_written_out_of_order():
    @loop_program
    def transpose(C, A):
        for j in _:
            for i in _:
                C[i, j] = A[j, i]
    M = np.array([[1.0, 1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 0.0, 0.0]])
    A = Tensor.from_numpy(M, Dense(RunList(Element(0.0))))
    # the loops write C column by column: it is built so and converted after the call (issue 29)
    k = compile_program(transpose, C=OUTPUTS["RunList"](), A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), M.T)
    assert "converts it to" in k.trace.find("output-order")[0].note

    @loop_program
    def two_orders(C, A):
        for j in _:
            for i in _:
                C[i, j] = A[j, i]
        for i in _:
            for j in _:
                C[i, j] += A[i, j]
    # writes in two orders: no one order appends C, so the first write out of order is refused
    with pytest.raises(ProgramError, match=r"output C is written out of order: its RunList level"):
        compile_program(two_orders, C=OUTPUTS["RunList"](), A=A)


def test_a_run_list_over_a_run_list_is_built_through_a_stand_in():
    # before: refused ("output C: a RunList output level needs Dense levels above it and an Element leaf");
    # now built as DCSR and converted after each call, the trace's convert step saying so
    A = Tensor.from_numpy(np.eye(3), Dense(RunList(Element(0.0))))
    B = Tensor.from_numpy(np.eye(3), Dense(RunList(Element(0.0))))
    k = compile_program(blend, C=RunList(RunList(Element(0.0))), A=A, B=B)
    assert_canonical(k(A=A, B=B), 0.75 * np.eye(3))
    note = next(s.note for s in k.trace.steps if s.stage == "convert")
    assert "assembles no level 0 (RunList) and level 1 (RunList) in C" in note and "builds C as dcsr," in note


ops = {"blend": (blend, lambda a, b: 0.5 * a + 0.25 * b)}


@loop_program
def maximum(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = max(A[i, j], B[i, j])


@loop_program
def product(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = A[i, j] * B[i, j]


KERNELS = [(blend, lambda a, b: 0.5 * a + 0.25 * b), (maximum, np.maximum), (product, np.multiply)]
IN_LEVELS = [RunList, SparseRunList, SparseList, Dense]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 4), st.integers(0, 25), st.sampled_from([1, 2, 6]), st.sampled_from([0, 1, 2]),
       st.sampled_from(IN_LEVELS), st.sampled_from(IN_LEVELS), st.sampled_from(list(OUTPUTS)),
       st.sampled_from([0.0, 1.0]), st.integers(0, 2**31 - 1), st.booleans())
def test_run_length_outputs_match_numpy(h, w, max_run, kernel, la, lb, out, fill, seed, checked):
    rng = np.random.default_rng(seed)
    a = fill + rle_image(rng, h, w, max_run + 1, values=3)
    b = fill + rle_image(rng, h, w, max_run + 1, values=3)
    A = Tensor.from_numpy(a, Dense(la(Element(fill))))
    B = Tensor.from_numpy(b, Dense(lb(Element(fill))))
    prog, ref = KERNELS[kernel]
    expected = ref(a, b)
    C = OUTPUTS[out](float(ref(np.float64(fill), np.float64(fill))))
    k = compile_program(prog, C=C, A=A, B=B, checked=checked)
    assert_canonical(k(A=A, B=B), expected)


# A reduction into a RunList output whose fill is not the reduction's identity: found by a differential
# probe, ``xp.min(A_csr, axis=0)`` into RunList(Element(0.0)) was refused ("out is RunList(Element(0.0))
# with fill 0.0: it starts at its fill, not at inf") while SparseList, SparseRunList, SparseHash and
# SparseBand outputs computed it. A RunList covers its fibers with runs but has no slot per coordinate:
# its entries start at the fill as a sparse level's do, so the reduction now goes through a scalar too.
REDUCTIONS = {"sum": "y[j] = sum[i](A[i, j])", "min": "y[j] = min[i](A[i, j])", "max": "y[j] = max[i](A[i, j])",
              "prod": "y[j] = prod[i](A[i, j])"}


def reduced(program, A, out):
    """The looplets kernel of ``program`` into ``out``, compiled and interpreted, against the oracle
    (its storage canonical)."""
    want, _ = evaluate(program, A=A)
    out = Format(out)
    k = lower(program, strategy="looplets", A=A, y=out)
    got = k(A=A)
    np.testing.assert_array_equal(got.to_numpy(), want)
    if not np.isnan(out.fill):
        # (a RunList of fill NaN keeps NaN entries next to each other as runs apart, as any of its
        # kernels does, where Tensor.from_numpy merges them into one run of the fill)
        assert_canonical(got, want)
    np.testing.assert_array_equal(k.interpret(A=A).to_numpy(), want)
    return k


def matrix(fill):
    a = np.full((4, 5), fill)
    a[0, 1], a[1, 1], a[2, 0], a[1, 3], a[3, 3], a[0, 4] = 2.0, -1.0, nan, inf, -inf, 0.5
    return a


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("fill,out_fill", [(0.0, 0.0), (1.0, 1.0), (nan, 0.0), (-inf, nan), (0.0, -inf)])
def test_a_reduction_into_a_run_list_of_another_fill_goes_through_a_scalar(name, fill, out_fill):
    A = Tensor.from_numpy(matrix(fill), "csr", fill=fill)
    k = reduced(REDUCTIONS[name], A, RunList(Element(out_fill)))
    identity = {"sum": 0.0, "min": inf, "max": -inf, "prod": 1.0}[name]
    if not (out_fill == identity):   # (NaN is no operator's identity)
        assert "hoist-reductions" in k.trace.stages()


def test_a_three_dimensional_sum_into_dense_run_lists_of_fill_one():
    """The probe's ``xp.sum(A3, axis=1)`` into ``Dense(RunList(Element(1.0)))``."""
    a = np.zeros((2, 3, 4))
    a[0, 1, 2], a[1, 0, 1], a[1, 2, 1], a[0, 2, 3] = 2.0, -inf, 0.5, nan
    A = Tensor.from_numpy(a, Format(Dense(SparseList(SparseList(Element(0.0))))))
    program = "y[i, k] = sum[j](A[i, j, k])"
    want, _ = evaluate(program, A=A)
    k = lower(program, strategy="looplets", A=A, y=Dense(RunList(Element(1.0))))
    assert_canonical(k(A=A), want)
    assert "hoist-reductions" in k.trace.stages()


@settings(max_examples=5, deadline=None)
@given(name=st.sampled_from(sorted(REDUCTIONS)), fills=st.tuples(st.sampled_from([0.0, 1.0, nan, -inf]),
                                                                  st.sampled_from([0.0, 1.0, nan, -inf])),
       density=st.sampled_from([0.0, 0.5, 1.0]), rows=st.integers(0, 3), seed=st.integers(0, 2 ** 16))
def test_reductions_into_run_lists_match_the_oracle(name, fills, density, rows, seed):
    """Any fill of the input and of the RunList output, NaN and ±inf stored, empty and all-fill inputs."""
    fill, out_fill = fills
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((rows, 4)) < density, rng.choice([2.0, -1.0, 0.5, nan, inf, -inf], (rows, 4)), fill)
    reduced(REDUCTIONS[name], Tensor.from_numpy(a, "csr", fill=fill), RunList(Element(out_fill)))
