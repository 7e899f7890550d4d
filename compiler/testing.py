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
    ref = Tensor.from_numpy(expected, out.format)
    for got, want in zip(out.levels, ref.levels):
        for kind, arr in want.arrays().items():
            np.testing.assert_array_equal(got.arrays()[kind], arr, err_msg=f"{want.name}.{kind}")
    np.testing.assert_array_equal(out.vals, ref.vals)
