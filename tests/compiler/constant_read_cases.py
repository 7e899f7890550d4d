"""What the two strategies' tests of reads at constant indexes share: a vector of a fill, the check that
an expression is lowered as one kernel whose result (by the kernel and by the IR interpreter) is
numpy's, and one drawn case of the properties (``tests/compiler/lattice/test_seq_located_entries.py``,
``tests/compiler/looplets/test_constant_reads.py``)."""

import numpy as np

import compiler as ss
from compiler import array as xp

nan, inf = np.nan, np.inf
FILLS = [0.0, inf, -inf, nan]


def vector(values, fmt, fill):
    """``values`` stored in ``fmt`` of fill ``fill`` (entries equal to the fill not stored), and its array."""
    t = ss.Tensor.from_numpy(np.asarray(values, dtype=float), fmt, fill=fill)
    return t, t.to_numpy()


def lowered_once(expr, want, strategy: str):
    """``expr`` lowered by ``strategy`` as one kernel (no materialize step in its trace), its result by the
    kernel and the IR interpreter against numpy's ``want``; the kernel."""
    k = ss.lower(expr, strategy=strategy)
    assert not k.trace.find("materialize"), [s.note for s in k.trace.find("materialize")]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(k().to_numpy()), want)
        np.testing.assert_array_equal(np.asarray(k.interpret().to_numpy()), want)
    return k


def oracle_checked(program: str, **tensors):
    """Index notation ``program`` over ``tensors`` lowered by the lattice, its result by the kernel, the IR interpreter
    and the sequence CFIR's interpreter against the dense oracle's; the kernel."""
    from compiler import evaluate
    from compiler.lattice.seqderive import seq_evaluate
    with np.errstate(all="ignore"):
        want = np.asarray(evaluate(program, **{n: t.to_numpy() for n, t in tensors.items()})[0])
        np.testing.assert_array_equal(seq_evaluate(program, **tensors), want)
        k = ss.lower(program, strategy="lattice", **tensors)
        np.testing.assert_array_equal(np.asarray(k(**tensors).to_numpy()), want)
        np.testing.assert_array_equal(np.asarray(k.interpret(**tensors).to_numpy()), want)
    return k


def drawn_case(values, fill, fmt, expression, k, m, check):
    """One drawn case: ``expression`` (an array builder and numpy's, each of the vector and two indexes)
    over ``values`` stored in ``fmt`` of fill ``fill``, at ``k`` and ``m`` brought in range (negative ones
    kept negative), checked by ``check(expr, want)``."""
    n = len(values)
    k, m = k % n - (n if k < 0 else 0), m % n - (n if m < 0 else 0)
    t, w = vector(values, fmt, fill)
    build, want = expression
    with np.errstate(all="ignore"):
        expected = want(w, k, m)
    return check(build(xp.asarray(t), k, m), expected)
