"""The array expressions of the split tests (test_seq_split_unions, test_seq_split_values): an operand as a
numpy array and a lazy Array, and the check that an expression is one lattice kernel, right against numpy.

>>> a, A = operand(4, "sparse_vector", 0)
>>> A.shape
(4,)
"""

import numpy as np

from compiler import Tensor, array as xp
from compiler.reference import evaluate


def operand(shape, fmt, seed, density=0.5, fill=0.0, odd=()):
    """A numpy array of ``shape`` and it as a lazy Array of ``fmt``; ``odd``: values stored first."""
    r = np.random.default_rng(seed)
    a = np.where(r.random(shape) < density, r.choice([1.0, -2.0, 3.5], shape), fill)
    a.flat[:len(odd)] = odd
    return a, xp.asarray(Tensor.from_numpy(a, fmt, fill=fill))


def one_lattice_kernel(expr, want, out=None, retried=False):
    """``expr`` lowered by the lattice as one kernel (no retry, unless ``retried``: a form the lattice refused
    before another it takes), right against numpy (NaN where numpy has NaN, and its dtype), the dense oracle of
    its statement and the IR interpreter; the kernel."""
    kernel = expr.lower(out, strategy="lattice")
    if not retried:
        assert kernel.trace.find("retry") == [], [s.note for s in kernel.trace.find("retry")]
    assert kernel.trace.find("materialize") == []
    got = kernel()
    got.validate()
    assert got.to_numpy().dtype == want.dtype
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    return kernel
