"""A split of a strided slice under the looplets strategy (issue 30 item 4): ``x[::2].reshape(4, 6)``,
``C[i, j] = split(slice(A[l], l -> k, (0, 48, 2)), k -> (i, j:6))``, reads ``A`` at the slice's
``l = start + step·(j + i·6)``: for a positive step under a one-step loop ``t`` after ``j``'s,
``A[t + (start + step·(j + i·6))]``, whose cursor is carried from one ``j`` to the next (a forward
walk); for a negative one let-bound before the statement, each entry located (a binary search in a
sparse level); a window (step 1) is an offset of ``j``. It was refused
('here it is computed by another shape operator (j + i * 6)'), and the array front end
materialized the slice and the reshape. Against numpy, the dense oracle and the IR interpreter,
through index notation and the array front end."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.looplets.shape_checks import checked_kernel, one_kernel
from tests.compiler.looplets.slice_cases import bounds

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(n=st.integers(0, 30), r=st.sampled_from([2, 3, -1, -2, -3, 1]), cut=st.tuples(st.integers(-31, 31),
       st.integers(-31, 31)), cols=st.integers(1, 4), fmt=st.sampled_from(["sparse", "dense"]),
       fill=st.sampled_from(FILLS), out=st.sampled_from(["csr", "coo", "dense"]), seed=st.integers(0, 2 ** 16))
@example(n=48, r=2, cut=(0, 48), cols=6, fmt="sparse", fill=0.0, out="csr", seed=0)        # x[::2]; refused before
@example(n=48, r=-2, cut=(47, -49), cols=6, fmt="sparse", fill=np.nan, out="coo", seed=1)  # x[::-2]; refused before
@example(n=20, r=3, cut=(1, 19), cols=3, fmt="dense", fill=-np.inf, out="csr", seed=2)     # refused before
@example(n=0, r=-2, cut=(0, 0), cols=2, fmt="sparse", fill=1.0, out="coo", seed=3)         # empty
@example(n=12, r=-3, cut=(11, -13), cols=2, fmt="dense", fill=np.inf, out="dense", seed=4)
@example(n=10, r=1, cut=(2, 8), cols=3, fmt="sparse", fill=0.0, out="csr", seed=5)         # a window
@example(n=1, r=2, cut=(0, 1), cols=1, fmt="sparse", fill=0.0, out="csr", seed=0)   # (a stop a stride on: past 1)
def test_a_split_of_a_strided_slice(n, r, cut, cols, fmt, fill, out, seed):
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf, -np.inf], n), fill)
    a, _ = bounds(n, r, *cut)
    sliced = x[cut[0]:cut[1]:r]
    rows = len(sliced) // cols
    sliced = sliced[:rows * cols]        # (the slice's first rows·cols entries, split into rows)
    # (its stop just past the last one it reads: a stride further may be past the extent, which a slice refuses)
    b = a + r * (rows * cols - 1) + (1 if r > 0 else -1) if rows * cols else a
    prog = f"C[i, j] = split(slice(A[l], l -> k, ({a}, {b if b >= 0 else -1}, {r})), k -> (i:{rows}, j:{cols}))"
    A = ss.Tensor.from_numpy(x, fmt, fill=fill)
    kernel, _ = checked_kernel(prog, sliced.reshape(rows, cols), out, A=A)
    # (a sparse A is walked, its cursor carried from one coordinate to the next, a window's from row
    # to row: up A for a positive step, down it for a negative one; none is gathered, each entry sought)
    assert not kernel.trace.find("gather"), kernel.trace
    assert bool(kernel.trace.find("carry")) == (fmt == "sparse"), kernel.trace
    assert all(("(down)" in s.note) == (r < 0) for s in kernel.trace.find("carry")), kernel.trace


@pytest.mark.parametrize("fmt", ["sparse", "dense", "coo"])
@pytest.mark.parametrize("key", [np.s_[::2], np.s_[::-2], np.s_[3:43:2], np.s_[-3:-43:-2], np.s_[1:25]])
def test_the_array_front_end_splits_a_strided_slice_in_one_looplets_kernel(fmt, key):
    x = np.where(np.arange(48) % 3 == 0, 0.0, np.arange(48.0))
    x[[4, 7]] = np.nan, -np.inf
    X = xp.asarray(ss.Tensor.from_numpy(x, fmt))
    kernel = one_kernel(X[key].reshape(4, -1))
    assert "split(slice(" in str(kernel.program), kernel.program
    np.testing.assert_array_equal(kernel().to_numpy(), x[key].reshape(4, -1))


@pytest.mark.parametrize("cut, out", [((1, 30, 2), "csr"), ((29, -1, -2), "coo"), ((2, 29, 3), "dense")])
def test_a_split_of_a_strided_slice_of_a_concatenation(cut, out):
    # (each part read permissively where t + (s + r·(j + i·|j|)) falls in it; refused before: 'here it
    # is computed by another shape operator')
    x, y = np.where(np.arange(12) % 3 == 0, 0.0, np.arange(12.0)), np.where(np.arange(18) % 2 == 0, np.nan, -1.0)
    sliced = np.concatenate([x, y])[cut[0]:cut[1] if cut[1] >= 0 else None:cut[2]]
    cols = 5 if len(sliced) % 5 == 0 else 3
    prog = f"C[i, j] = split(slice(concat((B[l], D[m]), (l, m) -> n), n -> k, {cut}), k -> (i:{len(sliced) // cols}, " \
           f"j:{cols}))"
    tensors = {"B": ss.Tensor.from_numpy(x, "sparse"), "D": ss.Tensor.from_numpy(y, "sparse")}
    checked_kernel(prog, sliced.reshape(-1, cols), out, **tensors)
