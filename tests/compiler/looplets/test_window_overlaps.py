"""Two loops appending one fiber through windows that may overlap are refused when lowered
(compiler.looplets.appends: ``_windows_may_meet``).

Before, ``c[0:4][i] = a[i]`` then ``c[2:][i] = b[i]`` into a SparseList compiled, its order checked
at each call by the coordinates the output stored: where ``a`` stored an entry in the overlap and
``b`` held the fill, the second loop's write of the fill was dropped (an entry appended in order is
never taken back) and the output kept ``a``'s value, which no check of its order sees. Windows that
provably do not overlap (a concatenation, an hstack) are written as before. Oracles: numpy, the
storage ``Tensor.from_numpy`` builds."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Element, SparseCOO, SparseList
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.looplets.gallery import concat
from compiler.testing import assert_canonical

from tests.compiler.looplets.test_looplets_appends import overlapping, overlapping_rows
from tests.compiler.looplets.test_output_formats import hstack_by_rows as hstack_through_windows


@loop_program
def overlapping_sums(c, a, b):
    for i in _:
        c[0:4][i] += a[i]
    for i in _:
        c[2:][i] += b[i]


def vector(name, fill):
    return Format(SparseList(Element(fill)) if name == "sparse" else SparseCOO(1, Element(fill)))


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", ["sparse", "coo"])
def test_a_fill_written_where_two_windows_overlap_is_refused_not_dropped(out, fill):
    a = np.array([fill, 1.0, fill, 5.0])
    b = np.array([fill, fill, fill, 7.0])   # (b[1] -> c[3], the fill over a's 5: the output kept 5)
    A, B = Tensor.from_numpy(a, "sparse", fill=fill), Tensor.from_numpy(b, "sparse", fill=fill)
    c = Tensor.from_numpy(np.full(6, fill), vector(out, fill))
    with pytest.raises(ProgramError, match=r"the window of line \d+, \[2:size\(c, 0\)\], may overlap that of "
                                           r"line \d+, \[0:4\].*a fill the second writes over it would be dropped"):
        compile_program(overlapping, c=c, a=A, b=B)
    M = Tensor.from_numpy(np.array([[fill, 2.0, 3.0]] * 4), "csr", fill=fill)
    with pytest.raises(ProgramError, match="may overlap"):
        compile_program(overlapping_rows, D=Tensor.from_numpy(np.full((4, 5), fill), "csr", fill=fill), A=M, B=M)


def test_sums_through_overlapping_windows_are_still_checked_at_the_call():
    # (a fill added changes nothing: only overwrites are refused; the call checks the order, as before)
    A = Tensor.from_numpy(np.array([1.0, 2.0, 0.0, 0.0]), "sparse")
    B = Tensor.from_numpy(np.array([0.0, 0.0, 3.0, 4.0]), "sparse")
    k = compile_program(overlapping_sums, c=Tensor.from_numpy(np.zeros(6), "sparse"), a=A, b=B)
    assert "the second loop must write only coordinates after the first's" in k.lowered.validate_output
    assert_canonical(k(a=A, b=B), np.array([1.0, 2.0, 0.0, 0.0, 3.0, 4.0]))


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_windows_that_do_not_overlap_are_written_as_before(fill):
    a = np.array([[1.0, fill, np.inf], [fill, fill, fill], [np.nan, 2.0, fill], [fill, -np.inf, 3.0]])
    b = np.array([[fill, 4.0, fill], [5.0, fill, 6.0], [fill, fill, fill], [7.0, fill, fill]])
    A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "coo", fill=fill)
    k = compile_program(hstack_through_windows, D=Tensor.from_numpy(np.full((4, 6), fill), "csr", fill=fill), A=A, B=B)
    assert_canonical(k(A=A, B=B), np.hstack([a, b]))


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.tuples(st.integers(0, 5), st.integers(0, 5)), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["sparse", "coo"]), seed=st.integers(0, 2 ** 16))
def test_a_concatenation_through_windows_by_property(n, fill, out, seed):
    rng = np.random.default_rng(seed)
    a, b = (np.where(rng.random(k) < 0.5, rng.choice([1.0, np.nan, np.inf, -np.inf], k), fill) for k in n)
    A, B = Tensor.from_numpy(a, "sparse", fill=fill), Tensor.from_numpy(b, "sparse", fill=fill)
    k = compile_program(concat, C=Tensor.from_numpy(np.full(sum(n), fill), vector(out, fill)), A=A, B=B)
    assert_canonical(k(A=A, B=B), np.r_[a, b])
