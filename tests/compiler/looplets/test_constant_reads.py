"""Reads at a constant index by the looplets (compiler.looplets.lowerers, issue 30): every read of one fiber
at one coordinate goes through one lookup, a level's ``follow`` protocol where it locates a coordinate
(a search of a SparseList, a probe of a SparseHash, a SparseByteMap's mark). ``square(sign(w[1]))`` reads
``w[1]`` six times: each read was a walk over a window of length one nested in every case of the others',
minutes of lowering and 670 lines of C for ``sign(w[1])`` alone. Checked by numpy, the compiled kernel and
the IR interpreter; structure by the searches and lines of C."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.constant_read_cases import FILLS, drawn_case, lowered_once, vector

nan, inf = np.nan, np.inf
#: vector formats whose level locates a coordinate, and the call each lookup makes in the C
LOCATING = {"sparse": "lower_bound_int64(", "SparseHash(Element(0.0))": "int64_t slot",
            "SparseByteMap(Element(0.0))": None}
EXPRESSIONS = {
    "square(sign(w[k]))": (lambda w, k, m: xp.square(xp.sign(w[k])), lambda w, k, m: np.square(np.sign(w[k]))),
    "sign(w[k]) * w[k] + w[k]": (lambda w, k, m: xp.sign(w[k]) * w[k] + w[k],
                                 lambda w, k, m: np.sign(w[k]) * w[k] + w[k]),
    "where(w[k] > w[m], w[k], -w[m])": (lambda w, k, m: xp.where(w[k] > w[m], w[k], -w[m]),
                                        lambda w, k, m: np.where(w[k] > w[m], w[k], -w[m])),
    "square(sign(w))[k]": (lambda w, k, m: xp.square(xp.sign(w))[k], lambda w, k, m: np.square(np.sign(w))[k]),
}




def check(expr, want):
    return lowered_once(expr, want, "looplets")


def lines(k) -> int:
    return len(k.c_source.splitlines())


def test_issue_30_square_of_sign_of_a_constant_read_is_one_search():
    # (main: minutes of lowering; sign(w[1]) alone 670 lines of C, each read a walk of its own)
    t, w = vector([-1.0, 0.5, inf, 0.0, 0.5], "sparse", inf)
    x = xp.asarray(t)
    k = check(xp.square(xp.sign(x[1])), np.square(np.sign(w[1])))
    assert lines(k) < 50 and k.c_source.count("lower_bound_int64(") == 2, k.c_source   # (defined, called once)
    assert "while (" not in k.c_source.split("int out_kernel")[1] and "for (" not in k.c_source, k.c_source


@pytest.mark.parametrize("fmt", sorted(LOCATING))
@pytest.mark.parametrize("fill", FILLS)
@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@pytest.mark.parametrize("k, m", [(0, 4), (1, 2), (4, 0), (-1, -5), (3, 3)])
def test_constant_reads_of_each_locating_level(fmt, fill, name, k, m):
    # stored NaN, -0.0, +-inf and the fill's neighbours; entry 1 is the fill (not stored)
    kernel = drawn_case([-0.0, fill, nan, 2.0, -inf if fill != -inf else inf], fill, fmt, EXPRESSIONS[name], k, m,
                        check)
    # one lookup per coordinate read (not per read): two at most; a list's search is one case, its entry or
    # the fill (follow_looplets.present_where), a probe's the found and the absent case of the other's
    assert lines(kernel) < 120 and "for (" not in kernel.c_source, kernel.c_source
    call = LOCATING[fmt]
    if call is not None:
        lookups = 1 if "w[m]" not in name or k % 5 == m % 5 else 2 if fmt == "sparse" else 3
        assert kernel.c_source.count(call) == lookups + call.startswith("lower_bound"), kernel.c_source


@pytest.mark.parametrize("values", [[], [5.0], [inf, inf, inf]], ids=["empty-ish", "one", "all-fill"])
@pytest.mark.parametrize("fill", [0.0, inf, nan])
def test_constant_reads_of_short_and_all_fill_vectors(values, fill):
    values = [fill if v == inf else v for v in values] or [fill]
    t, w = vector(values, "sparse", fill)
    x = xp.asarray(t)
    for at in (0, -1):
        with np.errstate(all="ignore"):
            want = np.square(np.sign(w[at])) + w[at] * w[at]
        check(xp.square(xp.sign(x[at])) + x[at] * x[at], want)


@pytest.mark.parametrize("fmt", ["csr", "dcsr", "coo"])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_a_constant_row_read_several_times_is_located_once(fmt, fill):
    # (sign(A) * A + A)[2] reads row 2 of A three times: out[j] = sign(A[2, j]) * A[2, j] + A[2, j]
    rng = np.random.default_rng(7)
    a_ = np.where(rng.random((4, 6)) < 0.5, rng.choice([-1.0, 2.0, -0.0, nan, inf], (4, 6)), fill)
    t = ss.Tensor.from_numpy(a_, fmt, fill=fill)
    a, a_ = xp.asarray(t), t.to_numpy()
    with np.errstate(all="ignore"):
        want = (np.sign(a_) * a_ + a_)[2]
    k = check((xp.sign(a) * a + a)[2], want)
    assert lines(k) < 400, lines(k)


@given(values=st.lists(st.sampled_from([-1.0, 2.0, -0.0, nan, inf, -inf, 0.0]), min_size=1, max_size=6),
       fill=st.sampled_from(FILLS), fmt=st.sampled_from(sorted(LOCATING)), name=st.sampled_from(sorted(EXPRESSIONS)),
       k=st.integers(-6, 5), m=st.integers(-6, 5))
@example(values=[-1.0, 0.5, inf, 0.0, 0.5], fill=inf, fmt="sparse", name="square(sign(w[k]))", k=1, m=1)
@example(values=[nan], fill=nan, fmt="SparseHash(Element(0.0))", name="where(w[k] > w[m], w[k], -w[m])", k=-1, m=0)
def test_constant_reads_match_numpy(values, fill, fmt, name, k, m):
    drawn_case(values, fill, fmt, EXPRESSIONS[name], k, m, check)
