"""The loops inside one part of a stack or concatenation walk that part's tensors alone (issue 30), lowered by
the lattice strategy.

``stack([A * 2, B * 2, C * 2])`` of COO matrices is ``concat((broadcast(l:1, A[j, k] * 2), ...), (l, m, n) -> i)``:
its rows ``i`` are ``U_l ⊔ U_m ⊔ U_n``, and below each part's row its loops over ``j`` and ``k`` are each
``j_A ∪ j_B ∪ j_C`` as derived. On main the first part's loops walked that whole union (7 lattice points
for ``k``, each computing ``A``'s value alone), so the C grew as 3^n with the parts: 330,734 lines for a
stack of five functions of one COO matrix (the test suite's GCC took 2.4 GB to build it). Now a tensor read
only in the parts the loops are not at leaves the loop's sequence (``j_A`` alone in the first part), and
each part adds the same code. Each kernel against numpy, the dense oracle and the IR interpreter
(``one_lattice_kernel``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp
from tests.compiler.lattice.split_kernels import one_lattice_kernel

M = np.array([[1.0, 0, -3], [0.5, 0, 2]])


def part(k: int, fmt: str):
    """The ``k``-th part's matrix, another multiple of ``M`` each (numpy's, or a Tensor in ``fmt``)."""
    a = M * (k + 1)
    return xp.asarray(a if fmt == "numpy" else Tensor.from_numpy(a, fmt)), a


@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_each_part_walks_its_own_tensors(fmt):
    arrays, values = zip(*(part(k, fmt) for k in range(3)))
    k = one_lattice_kernel(xp.stack([a * 2 for a in arrays]), np.stack([v * 2 for v in values]), "coo")
    notes = [s.note for s in k.trace.find("lattice")]
    # (on main: the first part's loops 3 and 7 points, A's beside B's and C's)
    assert notes == ["forall i: 3 point(s)"] + ["forall j: 1 point(s)", "forall k: 1 point(s)"] * 3, notes
    cfir = k.trace.find("cfir")[0].after_text
    assert "while k <- k_A\n" in cfir and "k_A ∪ k_B" not in cfir, cfir


@pytest.mark.parametrize("fmt", ["coo", "csr", "numpy"])
def test_each_part_adds_the_same_code(fmt):
    lines = []
    for n in range(2, 7):
        arrays, values = zip(*(part(k, fmt) for k in range(n)))
        k = one_lattice_kernel(xp.stack([a - 1 for a in arrays]), np.stack([v - 1 for v in values]), "coo")
        lines.append(len(k.c_source.splitlines()))
    steps = np.diff(lines)
    # (on main, of COO parts: 874, 2277, ... lines, each part about 3 times the code before it)
    assert len(set(steps)) == 1 and steps[0] < lines[0], lines


def test_functions_of_one_matrix_stacked():
    # (the array front end's five parts of one COO matrix, the test suite's case that GCC took 2.4 GB to build)
    a = xp.asarray(Tensor.from_numpy(M, "coo"))
    parts = [a * 2, a + 1, -a, a * 0.5, a - 3]
    k = one_lattice_kernel(xp.stack(parts), np.stack([M * 2, M + 1, -M, M * 0.5, M - 3]), "coo")
    # (no more code than the same functions of five matrices, whose code each part adds to, above: on main, 25 times
    # more, the loops of each part walking every part's iterators over A)
    others = [xp.asarray(Tensor.from_numpy(M * k, "coo")) for k in range(1, 6)]
    apart = xp.stack([others[0] * 2, others[1] + 1, -others[2], others[3] * 0.5, others[4] - 3])
    assert len(k.c_source.splitlines()) <= len(apart.lower("coo", strategy="lattice").c_source.splitlines())


@settings(max_examples=25)
@given(n=st.integers(2, 4), axis=st.integers(0, 2), fmts=st.lists(st.sampled_from(["coo", "csr", "numpy"]),
       min_size=4, max_size=4), rows=st.integers(0, 4), cols=st.integers(1, 4), seed=st.integers(0, 2 ** 16),
       density=st.sampled_from([0.0, 0.3, 1.0]), out=st.sampled_from(["coo", None]))
def test_stacks_of_parts_against_numpy(n, axis, fmts, rows, cols, seed, density, out):
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random((rows, cols)) < density, rng.choice([1.0, -2.0, 0.5, np.nan, np.inf], (rows, cols)),
                       0.0) for _ in range(n)]
    arrays = [xp.asarray(v if f == "numpy" else Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    with np.errstate(invalid="ignore"):
        want = np.stack([v * 2 if k % 2 else v + 1 for k, v in enumerate(values)], axis=axis)
    one_lattice_kernel(xp.stack([a * 2 if k % 2 else a + 1 for k, a in enumerate(arrays)], axis=axis), want, out,
                       retried=True)
