"""Reductions that stop at their annihilator, shared by the lattice strategy's early-exit tests
(tests/compiler/lattice/test_early_exit.py) and the looplets' (test_notation_program.py): the
programs with the values that reach the annihilator, the truncated vectors that show how far a
loop read, and whether a kernel leaves a loop early.

>>> truncated([2.0, 0.0], 6).shape
(6,)
"""

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.imperative import ir, traverse
from compiler.levels import Dense, Element
from compiler.recheck import checked_now
from compiler.testing import random_sparse

#: (a scalar reduction of a vector v, v's first values: the last of them its annihilator)
VECTOR_REDUCTIONS = [
    ("s[] = prod[i](v[i])", [2.0, 0.0]),
    ("s[] = any[i](v[i] > 1)", [0.0, 3.0]),    # (a dense loop reads v[i] before the ||)
    ("s[] = all[i](v[i] > 1)", [3.0, 0.0]),
    ("s[] = min[i](v[i])", [1.0, -np.inf]),
    ("s[] = max[i](v[i] + 1)", [1.0, np.inf]),
    ("s[] = max[i](v[i] > 1)", [0.0, 3.0]),    # (of bools, max stops at true and min at false)
    ("s[] = min[i](v[i] > 1)", [3.0, 0.0]),
]
#: (a scalar reduction of a matrix M, its annihilator)
MATRIX_REDUCTIONS = [("s[] = prod[i, j](M[i, j])", 0.0), ("s[] = min[i, j](M[i, j])", -np.inf)]


def truncated(vals, size):
    """A dense vector of ``size`` whose values array holds only ``vals``: the IR interpreter checks
    every load, so a kernel reading past them fails there (it shows how far a loop ran)."""
    return ss.Tensor(Dense(Element(0.0, vals=np.asarray(vals, dtype=float)), size=size), check=False)


def interpret_truncated(kernel, **tensors):
    """``kernel.interpret(**tensors)`` where the tensors' values arrays end early on purpose (:func:`truncated`):
    the call is told they were checked (:class:`compiler.recheck.checked_now`), or its check of their arrays
    would refuse them (fewer values than entries) before the IR interpreter shows how far the loops read."""
    with checked_now(list(tensors.values())):
        return kernel.interpret(**tensors)


def reference(program, vals):
    """The oracle's value of a :data:`VECTOR_REDUCTIONS` program over ``vals`` and ones after them."""
    return ss.evaluate(program, v=ss.Tensor.from_numpy(np.array(vals + [1.0] * 4), "dense"))[0]


def breaks(k) -> bool:
    """Whether the kernel's IR leaves a loop early."""
    return any(isinstance(n, ir.Break) for n in traverse.walk(k.function))


#: reductions of a matrix M (and a vector b) by operators with an annihilator, for the property tests
MATRIX_ANNIHILATING = ["s[] = any[i, j](M[i, j] > 0)", "s[] = all[i, j](M[i, j] > 0)", "y[i] = min[j](M[i, j])",
                       "y[i] = max[j](M[i, j])", "s[] = prod[i, j](M[i, j])", "y[i] = any[j](M[i, j] < 0)",
                       "y[i] = b[i] + min[j](M[i, j] * 2)"]
MATRIX_FORMATS = ["csr", "dense", "coo", "dcsr", "csc"]
FILLS = [0.0, 1.0, np.nan, np.inf, -np.inf]


def over_annihilating_matrices(programs):
    """The property tests' decorator: hypothesis over ``programs`` and the arguments of
    :func:`annihilating_operands`, with the examples that found bugs pinned."""
    def wrap(test):
        test = example(program=programs[4], fmt="dense", fill=1.0, density=1.0, rows=2, special=0.0, seed=1)(test)
        test = example(program=programs[2], fmt="csr", fill=0.0, density=0.3, rows=3, special=-np.inf, seed=0)(test)
        test = given(program=st.sampled_from(programs), fmt=st.sampled_from(MATRIX_FORMATS),
                     fill=st.sampled_from(FILLS), density=st.sampled_from([0.0, 0.3, 1.0]), rows=st.integers(0, 3),
                     special=st.sampled_from([None, np.inf, -np.inf, np.nan, 0.0]), seed=st.integers(0, 3))(test)
        return settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))(test)
    return wrap


def annihilating_operands(fmt, fill, density, rows, special, seed) -> dict:
    """M (``rows`` x 3 in ``fmt`` with ``fill``, ``special`` in its middle row) and b for a
    :data:`MATRIX_ANNIHILATING` program."""
    rng = np.random.default_rng(seed)
    m = random_sparse((rows, 3), density, rng, fill=fill, lo=-2, hi=3)
    if special is not None and rows:
        m[rows // 2, 1] = special
    return dict(M=ss.Tensor.from_numpy(m, fmt, fill=fill), b=np.arange(float(rows)))
