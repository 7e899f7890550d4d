"""The looplets strategy's schedule (compiler.looplets.schedule): privatize, counting a scatter-reduction
into several tables. Each privatized kernel is checked against numpy (bincount, histogram), the dense
reference evaluator (index notation) and the IR interpreter, with every 8-bit value, several bin
counts, masks all set and none set, empty images and lengths not a multiple of the tables; the
refusals; the trace step; the C's shape."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler
from compiler import Tensor
from compiler.errors import StrategyError
from compiler.lattice.schedule import Schedule
from compiler.levels import Element, SparseByteMap
from compiler.looplets import compile_program
from compiler.looplets.histogram import IMAGE_U8, MASK_LIST, MASK_RUNS, MaskedHistogram8
from compiler.looplets.language import loop_program

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@loop_program
def weighted(bins, v, w):
    bins[...] = 0
    for i in _:
        bins[v[i]] += w[i]


@loop_program
def counts(bins, v):
    bins[...] = 0
    for i in _:
        bins[v[i]] += 1


def histogram(img, mask, bins):
    return np.histogram(img[mask != 0], bins=bins, range=(0, 256))[0]


@pytest.mark.parametrize("fmt", [MASK_LIST, MASK_RUNS])
@pytest.mark.parametrize("bins", [1, 7, 256])
def test_the_masked_histogram_counts_every_value_into_four_tables(bins, fmt):
    """Every 8-bit value, rows of lengths 0 to 13 (not multiples of 4), masks all set and none set."""
    h = MaskedHistogram8(bins)
    img = np.arange(256 * 14, dtype=np.int64).reshape(256, 14) % 256
    img = img.astype(np.uint8)
    mask = np.tril(np.ones((256, 14), bool), -1)[:, ::-1] | (np.arange(256)[:, None] % 3 == 0)
    for m in (mask, np.ones(img.shape, bool), np.zeros(img.shape, bool)):
        got = h(img, Tensor.from_numpy(m, fmt))
        np.testing.assert_array_equal(got, histogram(img, m, bins))
        np.testing.assert_array_equal(got, np.bincount((img[m].astype(np.int64) * bins) >> 8, minlength=bins))
    empty = Tensor.from_numpy(np.zeros((0, 0), bool), fmt)
    assert h(np.zeros((0, 0), np.uint8), empty).tolist() == [0] * bins
    (kernel,) = h.kernels.values()
    assert "privatize" in kernel.trace.stages()
    img_t = Tensor.from_numpy(img, IMAGE_U8)
    np.testing.assert_array_equal(kernel.interpret(img=img_t, mask=Tensor.from_numpy(mask, fmt)).to_numpy(),
                                  histogram(img, mask, bins))


def test_the_c_has_the_tables_a_remainder_loop_and_their_sum():
    h = MaskedHistogram8(16)
    for fmt, rest in ((MASK_LIST, "while (qmas < qmas_stop) {"), (MASK_RUNS, "for (int64_t c_4 = c_")):
        h(np.zeros((2, 9), np.uint8), Tensor.from_numpy(np.ones((2, 9), bool), fmt))
    for kernel in h.kernels.values():
        c = kernel.c_source
        # three extra tables of 16 on the stack: nothing allocated, nothing freed
        assert "int64_t bins_tables[48] = {0};" in c and "free(" not in c and "alloc_array" not in c
        assert c.count("bins_tables[16 + (") == 1 and c.count("bins_tables[32 + (") == 1
        assert "+ 3 < " in c and " += 4;" in c   # four iterations a step ...
        assert "bins_val[p_2] += bins_tables[p_2] + bins_tables[16 + p_2] + bins_tables[32 + p_2];" in c
    list_c, runs_c = (k.c_source for k in h.kernels.values())
    assert "while (qmas + 3 < qmas_stop) {" in list_c and "while (qmas < qmas_stop) {" in list_c   # ... the rest
    assert "while (c_5 + 3 < step_stop) {" in runs_c and "for (int64_t c_4 = c_5; c_4 < step_stop; c_4++)" in runs_c


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_integer_and_float_counts_of_a_scatter_of_any_length(dtype):
    """Weighted counts (integer and float, integers in the floats: exact) into 5 tables, the tables on
    the stack for 9 bins and allocated when the kernel runs for an extent known only then."""
    rng = np.random.default_rng(1)
    for n in (0, 1, 4, 5, 13, 64):
        v = rng.integers(0, 9, n).astype(np.int64)
        w = rng.integers(-3, 4, n).astype(dtype)
        k = compile_program(weighted, bins=np.zeros(9, dtype), v=v, w=w, schedule=Schedule().privatize("bins", 5))
        want = np.bincount(v, weights=w, minlength=9).astype(dtype)
        np.testing.assert_array_equal(k(v=v, w=w).to_numpy(), want)
    assert f"{'int64_t' if dtype == 'int64' else 'double'} bins_tables[36] = {{0}};" in k.c_source
    np.testing.assert_array_equal(k.interpret(v=v, w=w).to_numpy(), want)
    # (tables too large for the stack: a scratch array the kernel allocates, and frees)
    big = compile_program(weighted, bins=np.zeros(5000, dtype), v=v, w=w, schedule=Schedule().privatize("bins", 5))
    assert "bins_tables = alloc_array(20000, sizeof *bins_tables, true);" in big.c_source
    assert big.c_source.count("free(bins_tables);") >= 2   # (after the loops, and on a coordinate's error)
    np.testing.assert_array_equal(big(v=v, w=w).to_numpy(), np.bincount(v, weights=w, minlength=5000))


def test_a_weighted_scatter_against_the_dense_reference():
    """The weighted counts against compiler.evaluate of the same sum written densely, over a one-hot
    matrix (H[i, b] = w[i] where v[i] == b): bins[b] += H[i, b]."""
    rng = np.random.default_rng(2)
    v = rng.integers(0, 6, 23).astype(np.int64)
    w = rng.normal(size=23)
    k = compile_program(weighted, bins=np.zeros(6), v=v, w=w, schedule=Schedule().privatize("bins", 3))
    onehot = np.where(v[:, None] == np.arange(6), w[:, None], 0.0)
    want, _ = compiler.evaluate("bins[b] += H[i, b]", H=onehot, bins=np.zeros(6))
    np.testing.assert_allclose(k(v=v, w=w).to_numpy(), want, rtol=1e-12, atol=1e-12)   # (sums reassociated)
    np.testing.assert_allclose(k.interpret(v=v, w=w).to_numpy(), want, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(st.integers(0, 40), st.integers(1, 300), st.integers(2, 6), st.integers(0, 2**32 - 1))
@example(3, 256, 4, 0)   # fewer values than tables: the remainder loop alone
@example(0, 1, 2, 0)     # nothing to count
def test_property_privatized_counts_equal_bincount(n, extent, copies, seed):
    rng = np.random.default_rng(seed)
    v = rng.integers(0, extent, n).astype(np.int64)
    k = compile_program(counts, bins=np.zeros(extent, np.int64), v=v, schedule=Schedule().privatize("bins", copies))
    np.testing.assert_array_equal(k(v=v).to_numpy(), np.bincount(v, minlength=extent))


def test_the_trace_says_what_was_done():
    v = np.array([2, 0, 2], np.int64)
    k = compile_program(counts, bins=np.zeros(3, np.int64), v=v, schedule=Schedule().privatize("bins", 4))
    (step,) = [s for s in k.trace if s.stage == "privatize"]
    assert step.note == ("bins: 1 loop unrolled by 4, each lane updating its own table (3 extra tables of 3 "
                         "elements on the stack), the tables added into bins after the loops")
    assert "bins_tables" in step.after_text and "bins_tables" not in step.before_text


@loop_program
def assigned(bins, v):
    bins[...] = 0
    for i in _:
        bins[v[i]] = 1


@loop_program
def read_back(bins, v, out):
    bins[...] = 0
    for i in _:
        bins[v[i]] += 1
    out[...] = 0
    for b in _:
        out[b] = bins[b]
    for i in _:
        bins[v[i]] += 1


@loop_program
def diagonal(y, x):
    y[...] = 0
    for i in _:
        y[i] += x[i]


def test_refusals_say_why():
    v = np.array([1, 0], np.int64)
    bins = np.zeros(2, np.int64)
    with pytest.raises(StrategyError, match=r"privatize\('bins', copies=4\) does not apply: bins is assigned \(=\), "
                                            r"never updated"):
        compile_program(assigned, bins=bins, v=v, schedule=Schedule().privatize("bins"))
    with pytest.raises(StrategyError, match="the kernel reads bins between its updates"):
        compile_program(read_back, bins=bins, v=v, out=np.zeros(2, np.int64), schedule=Schedule().privatize("bins"))
    with pytest.raises(StrategyError, match="y is updated at the loops' own coordinates, not at a computed one"):
        compile_program(diagonal, y=np.zeros(2), x=np.ones(2), schedule=Schedule().privatize("y"))
    with pytest.raises(StrategyError, match=r"do not fit on the stack \(at most 8192\) and no workspace is allowed"):
        compile_program(counts, bins=np.zeros(5000, np.int64), v=v, schedule=Schedule().privatize("bins", 4, False))
    with pytest.raises(StrategyError, match=r"bins is SparseByteMap\(Element\(0, dtype='int64'\)\); privatize needs a dense output"):
        compile_program(counts, bins=Tensor.from_numpy(bins, SparseByteMap(Element(0))), v=v,
                        schedule=Schedule().privatize("bins"))
    with pytest.raises(StrategyError, match="the program has no output w"):
        compile_program(counts, bins=bins, v=v, schedule=Schedule().privatize("w"))
    with pytest.raises(StrategyError, match="v is an input"):
        compile_program(counts, bins=bins, v=v, schedule=Schedule().privatize("v"))
    with pytest.raises(StrategyError, match="copies is the number of tables, an integer from 2 to 16, not 1"):
        compile_program(counts, bins=bins, v=v, schedule=Schedule().privatize("bins", 1))
    with pytest.raises(StrategyError, match=r"reorder\(i\) is a command of the lattice strategy"):
        compile_program(counts, bins=bins, v=v, schedule=Schedule().reorder("i"))
    # the lattice strategy names the strategy that applies it
    with pytest.raises(StrategyError, match=r"privatize\(y, 4\) is a command of the looplets strategy \(strategy='looplets'\); "
                                            r"the lattice strategy's schedule takes reorder, precompute"):
        compiler.lower("y[i] += A[j, i] * x[j]", "lattice", options={"schedule": Schedule().privatize("y", 4)},
                       y=np.zeros(3), A="csr", x=np.zeros(2))


def test_privatize_of_index_notation_is_refused_before_lowering_saying_what_applies():
    # (issue 31: refused after lowering, as "updated at the loops' own coordinates", for every statement)
    for program in ("y[i] = A[i, j] * x[j]", "y[j] = A[i, j] * x[i]"):
        with pytest.raises(StrategyError, match=r"privatize\(y, 4\) does not apply to index notation: .* under "
                                                r"looplets index notation writes its output at its own loops' "
                                                r"coordinates .* parallelize\(i, races='copies'\)"):
            compiler.lower(program, "looplets", options={"schedule": Schedule().privatize("y", 4)}, A="csc",
                           x=np.zeros(2))


def test_a_non_associative_update_is_refused():
    from compiler.imperative.ir import For, Load, Store, Var
    from compiler.imperative.tables import NotPrivatizable, privatize_tables
    from compiler.imperative.traverse import fresh_namer
    i = Var("i")
    loop = For(i, 0, Var("n"), [Store("bins", Load("v", i), 1, "-")])
    with pytest.raises(NotPrivatizable, match="updated with -=, which is not associative and commutative"):
        privatize_tables([loop], "bins", 4, "int64", 4, fresh_namer([loop]))
