"""A sum whose loops run around a sparse output of 3 or more modes (issue 30, compiler.lattice.seqsumsort):
``c[j, m, n] = sum[i](concat((A[k, j, m, n], A1[l, j, m, n]), (k, l) -> i))`` (numpy's ``sum(concat(4-D parts),
axis=0)``) into a CSF, a COO or a Dense level over SparseLists has its terms bucketed by the output's first mode,
each bucket sorted by the other coordinates (one key) and each run of equal keys summed, then appended level by
level; under an operator (``* 2 + 1``) the sums are kept that way in a workspace the output's loops read. On main
each was refused ("bucketed by row into a CSR, CSC or COO matrix only, not into c's csf of 3 modes ... lower it
with strategy='looplets'"), and the array front end retried another way (a 'retry' step). Each kernel against
the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter (one_kernel,
run_all), the array expressions against numpy too."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_concat_fills import one_kernel, tensor
from tests.compiler.lattice.test_seqemit import run_all

nan, inf = np.nan, np.inf

STACK = "sum[i](concat((A[k, j, m, n], A1[l, j, m, n]), (k, l) -> i))"
SLICED = "sum[i](slice(A[k, j, m, n], k -> i, (0, 3, 2)))"
SPLIT = "sum[i](split(B[k, j, n], k -> (i:2, m:3)))"
COLLAPSED = "sum[i](collapse(E[a, b, j, m, n], (a, b) -> i))"

#: the output formats: shorthands, and levels whose leaf takes the result's fill ({fill})
OUTPUTS = ["csf", "coo", "Dense(SparseList(SparseList(Element({fill}))))", "Dense(Dense(SparseList(Element({fill}))))"]


def summed(program, out, vector=False, **tensors):
    """``program`` into ``out`` (of :data:`OUTPUTS`) by the lattice (one_kernel: right against evaluate, the IR
    and the CFIR interpreters), its sum's terms sorted by key, neither read converted nor kept in a dense
    workspace (``vector``: but a sum over one index); the kernel and its result."""
    with np.errstate(invalid="ignore"):
        fill = ss.evaluate(program, **tensors)[1]
    k, got = one_kernel(program, out.format(fill=float(fill)), **tensors)
    (step,) = k.trace.find("loop-order")
    assert "compiler.lattice.seqsumsort" in step.note or "compiler.lattice.seqsumrows" in step.note, step.note
    dense = re.findall(r"into (w\d*\[[^]]*\]) of \d+ entries", step.note)
    assert all("," not in w for w in dense) if vector else not dense, step.note
    assert not k.trace.find("convert")
    assert not sum_loops_writing_the_output(k), sum_loops_writing_the_output(k)
    # (no value equal to the output's fill is stored)
    vals = got.to_coords()[1]
    assert not np.any(np.isnan(vals) if np.isnan(got.fill) else vals == got.fill), (vals, got.fill)
    return k, got


def sum_loops_writing_the_output(k) -> list:
    """The loops of kernel ``k`` (writing ``c``) that store into a sum's workspace (``w...``) and name one of
    ``c``'s arrays or counters (its levels' segments): code that never runs, for the sum's loops write no entry of
    ``c``; each such loop's code."""
    from compiler.imperative.ir import For, Store, Var, While
    from compiler.imperative.traverse import walk
    out = re.compile(r"^(p?c\d|c_val)")
    found = []
    for loop in (n for n in walk(k.function.body) if isinstance(n, (For, While))):
        nodes = list(walk(loop))
        stores = {n.buffer for n in nodes if isinstance(n, Store)}
        names = stores | {n.name for n in nodes if isinstance(n, Var)}
        if any(b.startswith("w") for b in stores) and any(out.match(x) for x in names):
            found.append(str(loop))
    return found


def parts(seed, shapes=((3, 2, 3, 4), (2, 2, 3, 4)), fmts=("csf", "coo"), fills=(0.0, 0.0), density=0.5):
    """Two 4-D parts of ``shapes``, ``fmts`` and ``fills``, NaN and ±inf among their stored values."""
    return (tensor(shapes[0], fmts[0], seed, fills[0], density, odd=(nan, inf)),
            tensor(shapes[1], fmts[1], seed + 1, fills[1], density, odd=(-inf,)))


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("program", [f"c[j, m, n] = {STACK}", f"c[j, m, n] = {SLICED}", f"c[j, m, n] = {SPLIT}",
                                     f"c[j, m, n] = {COLLAPSED}"])
def test_a_sum_around_a_3d_sparse_output(program, out):
    A, A1 = parts(10)
    B = tensor((6, 2, 4), "csf", 12, odd=(nan,))
    E = tensor((2, 2, 2, 3, 4), "coo", 13, odd=(-inf, nan))
    reads = {"A": A, "A1": A1} if "A1" in program else {"B": B} if "B[" in program else \
        {"E": E} if "E[" in program else {"A": A}
    k, _ = summed(program, out, **reads)
    assert "sorted by key, each run of equal keys summed" in k.trace.find("loop-order")[0].note


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("program", [f"c[j, m, n] = {STACK} * 2 + 1", f"c[j, m, n] = {STACK} - D[j, m, n]",
                                     f"c[j, m, n] = {SPLIT} * 3 - 1", f"c[j, m, n] = {COLLAPSED} / 2"])
def test_a_sum_under_an_operator_into_a_3d_sparse_output(program, out):
    A, A1 = parts(20, fmts=("coo", "csf"))
    # (D stored as the output is, which the output's loops walk it in)
    D = tensor((2, 3, 4), "coo" if out == "coo" else "csf", 22, odd=(inf, nan))
    B = tensor((6, 2, 4), "coo", 23, odd=(-inf,))
    E = tensor((2, 2, 2, 3, 4), "csf", 24, fill=1.0, odd=(inf,))
    reads = {"B": B} if "B[" in program else {"E": E} if "E[" in program else \
        {"A": A, "A1": A1, **({"D": D} if "D[" in program else {})}
    k, _ = summed(program, out, **reads)
    assert "into sparse fibers first" in k.trace.find("loop-order")[0].note


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("operator", ["", " * 2 + 1"])
def test_a_summand_of_another_fill_is_folded_in_for_the_terms_a_key_lacks(fill, operator):
    A, A1 = parts(30, fmts=("csf", "csf"), fills=(fill, fill), density=0.3)
    k, _ = summed(f"c[j, m, n] = {STACK}{operator}", OUTPUTS[2], A=A, A1=A1)
    assert ("got += 1;" in k.c_source) == (fill != 0.0), k.c_source


@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("shapes", [((0, 2, 3, 4), (2, 2, 3, 4)), ((0, 2, 3, 4), (0, 2, 3, 4))])
def test_empty_and_all_fill_parts(shapes, out):
    summed(f"c[j, m, n] = {STACK}", out, A=tensor(shapes[0], "csf", 40), A1=tensor(shapes[1], "coo", 41))
    summed(f"c[j, m, n] = {STACK} * 2 + 1", out, A=tensor(shapes[1], "csf", 42, density=0.0),
           A1=tensor(shapes[0], "csf", 43, fill=1.0, density=0.0))


def test_four_modes_and_the_cfir_interpreter():
    # (a 4-D output: its key spans three modes, the runs nest three deep)
    A = tensor((2, 2, 3, 2, 3), "csf", 50, odd=(nan, -inf))
    for out in (ss.coo(4), ss.csf(4)):
        got = run_all("c[j, m, n, o] = sum[i](slice(A[k, j, m, n, o], k -> i, (0, 2, 1)))", {"A": A}, out=out)
        assert got.shape == (2, 3, 2, 3)
        np.testing.assert_array_equal(got, A.to_numpy().sum(axis=0))


def test_the_buckets_are_plain_c_and_hold_no_dense_block():
    A, A1 = parts(60, shapes=((2, 3, 5, 7), (1, 3, 5, 7)))
    k, _ = summed(f"c[j, m, n] = {STACK}", "csf", A=A, A1=A1)
    src = k.c_source
    # (phase 1 counts each j's terms, phase 2 places each term's key, each bucket is sorted and its runs summed)
    assert "c_next[j] += 1;" in src and "c_terms_key[t] = m * 7 + n;" in src, src
    assert "while (p < hi && c_terms_key[p] == n_key) {" in src
    # (no array of the output's every entry, 3 x 5 x 7 = 105, nor of a row's, 5 x 7 = 35, but a count per key of a
    # row where the terms are many against the row's keys, to sort a bucket by counting)
    assert "alloc_array(105," not in src and "alloc_array(35," not in src
    assert "alloc_array(35 <= 8 * n_terms ? 35 : 0, sizeof *c_key_counts, false);" in src
    k, _ = summed(f"c[j, m, n] = {STACK} * 2 + 1", "coo", A=A, A1=A1)
    assert "w1_idx[pw1] = m;" in k.c_source and "w2_pos[pw1 + 1] = pw2;" in k.c_source


@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("operator", ["", " * 2 + 1"])
def test_a_bucket_is_counted_or_merged_as_its_terms_fill_its_span(operator, out):
    # (j = 0: every coordinate stored, 2 x 3 x 4 = 24 terms over a span of 12 keys, counted; j = 1: one term,
    # merged; j = 2: none)
    from compiler.imperative.sorting import COUNTED_SPAN
    a = np.zeros((2, 3, 3, 4))
    a[:, 0] = np.arange(24).reshape(2, 3, 4) - 5.0
    a[0, 0, 0, 0], a[1, 0, 2, 3], a[1, 1, 2, 0] = nan, inf, -inf
    A = ss.Tensor.from_numpy(a[:1], "csf")
    A1 = ss.Tensor.from_numpy(a[1:], "coo")
    k, got = summed(f"c[j, m, n] = {STACK}{operator}", out, A=A, A1=A1)
    assert 12 <= COUNTED_SPAN * 24 and not 12 <= COUNTED_SPAN * 1
    src = k.c_source
    assert "its keys' span (12) at most 8 times its terms: counted" in src and "else its ascending runs merged" in src
    note = k.trace.find("loop-order")[0].note
    assert "counted where its keys' span is at most 8 times its terms, else merged" in note, note


@pytest.mark.parametrize("out", OUTPUTS[:3])
def test_minus_zero_terms_under_an_operator(out):
    # (-0.0 stored beside fills 1.0: c[0, 0, 0]'s three terms are all -0.0, c[1, 2, 3] has one; D, of fill NaN,
    # stores -0.0 where the sum is 2.0. Each value and its sign as the dense oracle's, and numpy's)
    fmt = lambda f, n: ss.parse_format(f, ndim=n, fill=1.0)  # noqa: E731
    A = ss.Tensor.from_coords(([0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 2, 1], [0, 0, 3, 1]), [-0.0, -0.0, -0.0, 2.0],
                              (2, 2, 3, 4), fmt("csf", 4))
    A1 = ss.Tensor.from_coords(([0], [0], [0], [0]), [-0.0], (1, 2, 3, 4), fmt("coo", 4))
    d = np.full((2, 3, 4), nan)
    d[0, 0, 0], d[1, 2, 3], d[1, 1, 1], d[0, 1, 2] = 1.0, -1.0, -0.0, inf
    D = ss.Tensor.from_numpy(d, ss.parse_format("csf", ndim=3, fill=nan))
    assert np.signbit(A.to_coords()[1][:3]).all() and np.signbit(A1.to_coords()[1]).all()
    stack = np.concatenate([A.to_numpy(), A1.to_numpy()]).sum(axis=0)
    for program, want in [(f"c[j, m, n] = {STACK} * D[j, m, n]", stack * d),
                          (f"c[j, m, n] = {STACK} * 2 + 1", stack * 2 + 1)]:
        k, got = summed(program, out, A=A, A1=A1, **({"D": D} if "D[" in program else {}))
        with np.errstate(invalid="ignore"):
            oracle = ss.evaluate(program, A=A, A1=A1, D=D)[0]
        for ref in (oracle, want):
            np.testing.assert_array_equal(got.to_numpy(), ref)
            np.testing.assert_array_equal(np.signbit(got.to_numpy()), np.signbit(ref))


def test_a_key_beyond_int64_is_refused_saying_why():
    from compiler.lattice.seqsumsort import unsorted
    assert "as one int64 key, but c's modes after its first span" in unsorted("c", ss.coo(3), (2, 2 ** 32, 2 ** 31))
    assert unsorted("c", ss.coo(3), (2, 2 ** 31, 2 ** 31)) == ""


# -- the array front end: one kernel, no retry, no materialized stack, no conversion ----------------------------


def one_array_kernel(expr, want, out):
    """``expr`` lowered by the lattice into ``out`` as one kernel (:func:`one_lattice_kernel`), no step retrying,
    materializing or converting."""
    with np.errstate(invalid="ignore"):
        k = one_lattice_kernel(expr, want, out)
    stages = k.trace.stages()
    assert not {"retry", "materialize", "convert"} & set(stages), stages
    return k


@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf,))])
def test_the_sum_of_a_4d_stack_into_a_3d_sparse_output(fill, odd, out):
    a, A = operand((2, 2, 3, 4), "csf", 70, fill=fill, odd=odd)
    b, B = operand((1, 2, 3, 4), "coo", 71, fill=fill)
    with np.errstate(invalid="ignore"):
        stacked = np.concatenate([a, b]).sum(axis=0)
    k = one_array_kernel(xp.sum(xp.concat([A, B]), axis=0) * 2 + 1, stacked * 2 + 1, out)
    assert "into sparse fibers first" in k.trace.find("loop-order")[0].note
    one_array_kernel(xp.sum(xp.concat([A, B]), axis=0), stacked, out)


# -- any formats, fills, shapes and outputs -----------------------------------------------------------------


@st.composite
def sums_into_3d_outputs(draw):
    """``(program, A, A1, out)``: a sum of a stack of two 4-D parts (or of one part's slices), alone or under an
    operator, of drawn formats, fills, densities, odd values and depths, into a drawn 3-D sparse output."""
    body = draw(st.sampled_from([STACK, SLICED]))
    program = "c[j, m, n] = " + body + draw(st.sampled_from(["", " * 2 + 1", " / 2"]))
    # (the first part stored sparse: the output's loops would walk it against its order)
    arrays = [tensor((draw(st.integers(0, 3)), 2, 2, 3), draw(st.sampled_from(fmts)), draw(st.integers(0, 99)),
                     draw(st.sampled_from([0.0, 1.0, nan])), draw(st.sampled_from([0.0, 0.4, 1.0])),
                     draw(st.sampled_from([(), (nan,), (inf, -inf)])))
              for fmts in (["csf", "coo"], ["csf", "coo", "dense"])]
    if body == SLICED and arrays[0].shape[0] < 3:
        program = program.replace("(0, 3, 2)", f"(0, {arrays[0].shape[0]}, 1)")
    return program, arrays[0], arrays[1], draw(st.sampled_from(OUTPUTS))


@settings(max_examples=7, deadline=None)
@given(sums_into_3d_outputs())
def test_any_sum_into_a_3d_sparse_output(case):
    program, A, A1, out = case
    summed(program, out, **({"A": A, "A1": A1} if "A1[" in program else {"A": A}))
