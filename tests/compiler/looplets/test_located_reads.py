"""COO tensors read against their storage order by the looplets (compiler.looplets.follow_looplets, issue
30): a mode whose index is bound by an outer loop is located by binary searches of the segment, its
tuples the next mode's segment (empty where the coordinate is not stored) and, at the last mode, the entry
present where found. Each such read was a walk over a window of length one with cases of its own, nested
in every case of the others': ``permute_dims(where(A > B, C, D), (1, 2, 0))`` over four 3-D COOs (the
fuzzer's seed 1075 reads so after materializing its concats) was 19,719 lines of C and 30 s of lowering.
Checked by numpy, the compiled kernel and the IR interpreter; structure by the searches and lines of C."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

nan, inf = np.nan, np.inf
FILLS = [0.0, inf, nan, 1.0]


def operands(shape, formats, seed=0, density=0.5):
    """Four tensors of ``shape`` of fills 0, inf, NaN, 1 in ``formats`` in turn, storing NaN, +-inf and -0.0
    among their values, and their arrays."""
    rng = np.random.default_rng(seed)
    tensors = []
    for k, fill in enumerate(FILLS):
        values = rng.choice([0.5, -2.5, 1.0, -0.0, 0.0, nan, inf, -inf], size=shape)
        values = np.where(rng.random(shape) < density, values, fill)
        tensors.append(ss.Tensor.from_numpy(values, formats[k % len(formats)], fill=fill))
    return tensors, [t.to_numpy() for t in tensors]


def check(expr, want):
    k = ss.lower(expr, strategy="looplets")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(k().to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    return k


def permuted_where(ops, where, transpose, perm):
    a, b, c, d = ops
    return transpose(where(a > b, c, d), perm)


def test_issue_30_a_where_of_coos_read_against_their_order_searches_each_mode():
    # (main: 19,719 lines of C, 30 s of lowering; the same with the fuzzer's concats materialized first)
    tensors, arrays = operands((4, 3, 2), ["coo"])
    with np.errstate(invalid="ignore"):
        want = permuted_where(arrays, np.where, np.transpose, (1, 2, 0))
    k = check(permuted_where([xp.asarray(t) for t in tensors], xp.where, xp.permute_dims, (1, 2, 0)), want)
    lines = k.c_source.splitlines()
    assert len(lines) < 400, len(lines)
    # each operand's two bound modes: the middle one's tuples (two searches), the last one's entry (one)
    assert k.c_source.count("lower_bound_int64(") == 1 + 4 * 3, k.c_source


def test_the_fuzzers_concats_of_coos_then_a_permutation():
    tensors, arrays = operands((2, 3, 2), ["coo"])
    X, A = [xp.asarray(t) for t in tensors], arrays
    cat = lambda xs, ys: (xp.concat(xs, axis=0), np.concatenate(ys, axis=0))
    (p, p_), (q, q_), (r, r_), (s, s_) = cat(X[:2], A[:2]), cat(X[2:], A[2:]), cat(X[1::-1], A[1::-1]), \
        cat(X[:1:-1], A[:1:-1])
    with np.errstate(invalid="ignore"):
        want = np.transpose(np.where(p_ > q_, r_, s_), (1, 2, 0))
    k = check(xp.permute_dims(xp.where(p > q, r, s), (1, 2, 0)), want)
    assert len(k.c_source.splitlines()) < 400


MIXES = [["coo"], ["coo", "csf", "dense", "coo"], ["csf"], ["coo", "dense"]]
PERMS = [(1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0)]


# (every mix in every order at a full shape; at the one-entry and the empty shape, each mix in one order, each order
# with one mix, another at each shape: all 48 were 21 s of the suite)
CASES = [(f, p, (3, 2, 4)) for f in MIXES for p in PERMS] + [
    (f, PERMS[(k + d) % 4], shape) for d, shape in ((0, (1, 1, 1)), (2, (0, 2, 3))) for k, f in enumerate(MIXES)]


@pytest.mark.parametrize("formats, perm, shape", CASES, ids=["-".join(f) + f"-{p}-{s}" for f, p, s in CASES])
def test_format_mixes_read_in_every_order(formats, perm, shape):
    tensors, arrays = operands(shape, formats, seed=sum(perm) + len(formats))
    with np.errstate(invalid="ignore"):
        want = permuted_where(arrays, np.where, np.transpose, perm)
    k = check(permuted_where([xp.asarray(t) for t in tensors], xp.where, xp.permute_dims, perm), want)
    if set(formats) == {"coo"}:   # (a CSF's last level still lowers its found and absent cases apart)
        assert len(k.c_source.splitlines()) < 400


# (40 drawn cases beside the grid above of 48; each a kernel of about a second: the default 100 were 20 s of the suite)
@settings(max_examples=20)
@given(shape=st.tuples(*[st.integers(0, 3)] * 3), density=st.sampled_from([0.0, 0.4, 1.0]),
       perm=st.permutations([0, 1, 2]), formats=st.lists(st.sampled_from(["coo", "csf", "dense"]), min_size=4,
                                                         max_size=4), seed=st.integers(0, 3))
@example(shape=(4, 3, 2), density=0.5, perm=[1, 2, 0], formats=["coo"] * 4, seed=0)
@example(shape=(2, 1, 2), density=1.0, perm=[2, 1, 0], formats=["coo", "coo", "csf", "coo"], seed=1)
def test_reads_against_the_storage_order_match_numpy(shape, density, perm, formats, seed):
    tensors, arrays = operands(shape, formats, seed=seed, density=density)
    with np.errstate(invalid="ignore"):
        want = permuted_where(arrays, np.where, np.transpose, tuple(perm))
    check(permuted_where([xp.asarray(t) for t in tensors], xp.where, xp.permute_dims, tuple(perm)), want)
