"""Assertions for tests of kernels and level formats (the test suite's, and a format author's).

>>> import numpy as np
>>> from compiler import Tensor
>>> t = Tensor.from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]), "csr")
>>> assert_canonical(t, np.array([[0.0, 2.0], [3.0, 0.0]]))
"""

from __future__ import annotations

import numpy as np

from .tensor import Tensor


def assert_canonical(out: Tensor, expected: np.ndarray) -> None:
    """``out`` holds ``expected``, in exactly the storage :meth:`Tensor.from_numpy` builds for
    its format: every array of every level and the values (maximal runs and blocks, no
    stored fill where the format can leave it out)."""
    np.testing.assert_array_equal(out.to_numpy(), expected)
    assert_same_storage(out, Tensor.from_numpy(expected, out.format))


def assert_same_storage(got: Tensor, want: Tensor) -> None:
    """``got`` stores exactly ``want``'s arrays, level by level, and its values (two
    kernels that must assemble the same output, e.g. one-pass and two-phase).

    >>> a = Tensor.from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]), "csr")
    >>> assert_same_storage(a, Tensor.from_numpy(a.to_numpy(), "csr"))
    """
    for g, w in zip(got.levels, want.levels):
        for kind, arr in w.arrays().items():
            np.testing.assert_array_equal(g.arrays()[kind], arr, err_msg=f"{w.name}.{kind}")
    np.testing.assert_array_equal(got.vals, want.vals)


def assert_same_compressed(got, want) -> None:
    """Two scipy.sparse CSR or CSC matrices store the same arrays: ``indptr``, ``indices`` and
    ``data`` (a kernel's output shared with scipy against scipy's own result).

    >>> import scipy.sparse as sp
    >>> a = sp.csc_matrix(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> assert_same_compressed(a, a.tocsr().tocsc())
    """
    np.testing.assert_array_equal(got.indptr, want.indptr)
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def random_sparse(shape, density, rng, *, fill=0.0, lo=1, hi=6, dtype=float, empty=()) -> np.ndarray:
    """Integers in ``[lo, hi)`` at about ``density`` of the positions, ``fill`` elsewhere; the
    slices ``a[r]`` for ``r`` in ``empty`` are all fill (empty rows).

    >>> random_sparse((2, 3), 1.0, np.random.default_rng(0), empty=(0,)).tolist()[0]
    [0.0, 0.0, 0.0]
    """
    a = rng.integers(lo, hi, size=shape).astype(dtype)
    a[rng.random(shape) >= density] = fill
    for r in empty:
        a[r] = fill
    return a


def sketch(h: int, w: int, strokes: int, rng) -> np.ndarray:
    """A binary ``h`` x ``w`` image of ``strokes`` thin straight strokes (2 or 3 pixels wide) on a
    blank canvas, as the line drawings of the Finch paper's sketch dataset (erosion, histograms).

    >>> img = sketch(20, 30, 3, np.random.default_rng(1))
    >>> img.shape, img.dtype.name, bool(0 < img.mean() < 0.5)
    ((20, 30), 'bool', True)
    """
    img = np.zeros((h, w), bool)
    for _ in range(strokes):
        r0, c0, r1, c1 = rng.integers(0, h), rng.integers(0, w), rng.integers(0, h), rng.integers(0, w)
        t = np.linspace(0, 1, 2 * max(h, w))
        rr, cc = np.round(r0 + (r1 - r0) * t).astype(int), np.round(c0 + (c1 - c0) * t).astype(int)
        for d in range(int(rng.integers(2, 4))):
            img[np.clip(rr + d, 0, h - 1), cc] = True
            img[rr, np.clip(cc + d, 0, w - 1)] = True
    return img


def check_lowered(prog: str, schedule=None, out=None, checked: bool = False, options=None, functions=None,
                  strategy: str = "lattice", **tensors):
    """Lower ``prog`` (index notation, with user ``functions``) by ``strategy`` with ``schedule``, further
    lowering ``options`` and the output format ``out``, and check the compiled kernel and the IR interpreter
    against the dense oracle (and a bounds-checked build too with ``checked``); returns the kernel.

    >>> from compiler import Tensor
    >>> A = Tensor.from_numpy(np.array([[0.0, 2.0], [3.0, 0.0]]), "csr")
    >>> k = check_lowered("y[i] = A[i, j] * x[j]", A=A, x=np.array([1.0, 2.0]))
    >>> k = check_lowered("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=np.array([1.0, 2.0]))
    """
    from .lowering import lower
    from .notation import parse
    from .reference import evaluate
    if functions:
        prog = parse(prog, functions)
    kw = dict(tensors)
    if out is not None:
        kw[prog.lhs.tensor if functions else prog.split("[")[0].strip()] = out
    options = {**(options or {}), **({"schedule": schedule} if schedule is not None else {})}
    want, _ = evaluate(prog, **tensors)
    k = lower(prog, strategy, options=options, **kw)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)
    if checked:
        np.testing.assert_allclose(lower(prog, strategy, options=options, checked=True, **kw)(**tensors).to_numpy(),
                                   want)
    return k
