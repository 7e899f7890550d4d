"""A slice of a concatenation or a stack along its axis, lowered as the concatenation of the parts it takes, each
sliced (issue 30, compiler.array.pushed_slices). The looplets read ``concat([A @ v, A @ v * 2])[1:]`` at the
slice's computed index by taking the first part whose accesses are not missing, which a part holding a sum never
is: they refuse it (compiler.looplets.shape_reads), and the array front end computed the concatenation by a kernel
of its own. Now the statement is ``concat([(A @ v)[1:], A @ v * 2])``, one kernel, a phase a part. Each against
numpy, the dense oracle of the statement (compiler.evaluate) and the IR interpreter, the output validated; the
default strategy too; NaN and ±inf stored, fills 0 and NaN, negative steps, integers, empty and all-fill parts."""

import itertools

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.array import build
from compiler.array.nodes import Leaf
from compiler.array.pushed_slices import parts_taken, slices_pushed, within
from compiler.interop import to_tensor
from compiler.reference import evaluate

nan, inf = np.nan, np.inf


def matrix(rows: int, cols: int, fmt: str, seed: int, fill=0.0, density=0.5):
    """A ``rows x cols`` matrix stored in ``fmt`` of ``fill`` (NaN and ±inf among its stored values): lazy, numpy's."""
    rng = np.random.default_rng(seed)
    values = rng.choice([1.0, -2.0, 0.5, nan, inf, -inf, 3.0], (rows, cols))
    a = np.where(rng.random((rows, cols)) < density, values, fill)
    t = ss.Tensor.from_numpy(a, fmt, fill=fill)
    return xp.asarray(t), t.to_numpy()


def one_kernel(expr, want, strategy="looplets"):
    """``expr`` lowered by ``strategy`` as one kernel right against numpy, the dense oracle of its statement and
    the IR interpreter, nothing computed apart; the kernel."""
    kernel = ss.lower(expr, strategy=strategy)
    assert kernel.trace.find("materialize") == [], [s.note for s in kernel.trace.find("materialize")]
    got = kernel()
    got.validate()
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
        np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    return kernel


def test_issue_30_a_slice_of_a_concatenation_of_sums_is_one_looplets_kernel():
    A, v = np.array([[0, 0, 0], [0, 0, 1.0]]), np.arange(3.0)
    y = xp.asarray(A) @ v
    k = one_kernel(xp.concat([y, y * 2], axis=0)[1:], np.concatenate([A @ v, A @ v * 2])[1:])
    # (the slice of the concatenation refused, naming why; the slice on its first part, which it cuts)
    (retry,) = k.trace.find("retry")
    assert "is a reduction, whose value is never missing" in retry.note, retry.note
    (step,) = k.trace.find("array")
    assert "compiler.array.pushed_slices" in step.note, step.note
    assert str(k.program).startswith("out[i] = concat((slice(sum["), k.program


@pytest.mark.parametrize("key", [slice(None, None, -1), slice(-2, 0, -3), slice(1, None, 2), slice(4, 5),
                                 slice(5, 1, -1), slice(None, None, -7)])
@pytest.mark.parametrize("fill", [0.0, nan])
def test_three_parts_any_step(key, fill):
    a, A = matrix(3, 4, "csr", 1, fill)
    b, B = matrix(2, 4, "coo", 2, fill)
    v = np.array([1.0, -1.0, 2.0, 0.5])
    parts, want = [a @ v, b @ v * 2, a[:, 0]], [A @ v, B @ v * 2, A[:, 0]]
    with np.errstate(all="ignore"):
        want = np.concatenate(want)[key]
    one_kernel(xp.concat(parts)[key], want)
    one_kernel(xp.concat(parts)[key], want, strategy=None)


def test_a_stack_of_sums_sliced_on_both_axes():
    a, A = matrix(4, 3, "csr", 3)
    v = np.array([2.0, 0.0, -1.0])
    want = np.stack([A @ v, A @ v * 3, A[:, 1]])[2:0:-1, ::-2]
    k = one_kernel(xp.stack([a @ v, a @ v * 3, a[:, 1]])[2:0:-1, ::-2], want)
    assert "compiler.array.pushed_slices" in k.trace.find("array")[0].note


def test_columns_of_a_concatenation_along_its_second_axis():
    a, A = matrix(3, 3, "csr", 4)
    b, B = matrix(3, 2, "dense", 5)
    with np.errstate(all="ignore"):
        want = np.concatenate([A @ A, B * 2], axis=1)[::-1, -2:1:-1]
    one_kernel(xp.concat([a @ a, b * 2], axis=1)[::-1, -2:1:-1], want)
    one_kernel(xp.concat([a @ a, b * 2], axis=1)[::-1, -2:1:-1], want, strategy=None)


def test_within_takes_a_ranges_coordinates_in_a_window():
    for n, step in itertools.product(range(8), [-4, -2, -1, 1, 3]):
        for start, stop in itertools.product(range(-2, n + 2), repeat=2):
            r = range(*slice(start, stop, step).indices(n))
            for lo, hi in itertools.combinations(range(n + 1), 2):
                assert list(within(r, lo, hi)) == [c for c in r if lo <= c < hi], (r, lo, hi)


def test_what_is_not_moved():
    p, q = Leaf(to_tensor(np.ones((3, 2)), "P")), Leaf(to_tensor(np.zeros((2, 2)), "Q"))
    joined = build.concat([p, q])
    # (the whole axis taken, another axis sliced: the slice stays; no coordinate taken: nothing to join)
    assert parts_taken(build.getitem(joined, (slice(None), slice(1, None)))) is None
    assert parts_taken(build.getitem(joined, slice(2, 2))) is None
    assert slices_pushed(build.elementwise("add", joined, 1.0)) is None
    # (one part taken: that part, sliced where it is cut; an integer of a stack: its part)
    assert parts_taken(build.getitem(joined, slice(3, 5))) is q
    assert parts_taken(build.getitem(joined, slice(1, 3))).params == (((1, 3, 1), (0, 2, 1)),)
    assert parts_taken(build.getitem(build.stack([p, p]), 1)) is p


@given(sizes=st.lists(st.integers(0, 4), min_size=2, max_size=3), start=st.integers(-6, 12) | st.none(),
       stop=st.integers(-6, 12) | st.none(), step=st.sampled_from([None, 1, 2, 3, -1, -2, -5]),
       fill=st.sampled_from([0.0, nan]), fmts=st.lists(st.sampled_from(["csr", "coo", "dense"]), min_size=3,
                                                       max_size=3),
       summed=st.lists(st.booleans(), min_size=3, max_size=3), density=st.sampled_from([0.0, 0.5, 1.0]),
       seed=st.integers(0, 2 ** 16))
@example(sizes=[3, 2], start=None, stop=None, step=-2, fill=0.0, fmts=["csr", "coo", "dense"],
         summed=[True, True, False], density=0.5, seed=0)   # (the parts taken in the other order)
def test_slices_of_concatenations_by_property(sizes, start, stop, step, fill, fmts, summed, density, seed):
    v = np.array([1.0, -0.5, 2.0])
    parts, wants = [], []
    for m, (n, fmt, s) in enumerate(zip(sizes, fmts, summed)):
        a, A = matrix(n, 3, fmt, seed + m, fill, density)
        parts.append(a @ v if s else a[:, 2] * 2)
        with np.errstate(all="ignore"):
            wants.append(A @ v if s else A[:, 2] * 2)
    key = slice(start, stop, step)
    with np.errstate(all="ignore"):
        want = np.concatenate(wants)[key]
    for strategy in ("looplets", None):
        got = xp.concat(parts)[key].compute(strategy=strategy)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
