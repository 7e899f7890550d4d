"""Locators of the sequence CFIR (:mod:`compiler.lattice.seqlocate`): a dense operand of an intersection is
located at the coordinate the other walks, unless the loop's union walks it too. ``stack([a * b, b * c, c])``
of a dense ``c`` and a ``b`` holding -inf walks ``((i_a ∪ i_b) ∪ ((i_b ∩ i_c) ∪ U)) ∪ i_c``: located at ``i_b``,
``c``'s cursor left the coordinates its own walk was at, and no row before ``b``'s first entry was written (found
by a random run of joins; wrong on main before this test). Each kernel against numpy, the dense oracle and the
IR interpreter (``one_lattice_kernel``)."""

import numpy as np
import pytest

from compiler import Tensor, array as xp
from compiler.lattice.seqlocate import remove_locators
from compiler.lattice.sequences import Intersect, Level, Union, Universe
from tests.compiler.lattice.split_kernels import one_lattice_kernel

nan, inf = np.nan, np.inf


def test_a_dense_level_the_union_walks_is_not_located():
    b, c = Level("b", 0, "compressed", 4), Level("c", 0, "dense", 4)
    seq, locs = remove_locators(Union(Union(Intersect(b, c), Universe(4)), c))
    assert str(seq) == "(i_b ∪ U_i) ∪ i_c" and locs == ()
    # (walked nowhere else, it is located as before)
    seq, locs = remove_locators(Union(Intersect(b, c), Universe(4)))
    assert str(seq) == "i_b ∪ U_i" and [(str(x), str(y)) for x, y in locs] == [("i_c", "i_b")]


@pytest.mark.parametrize("a_values, a_fill", [([0.0, 0.0, 0.0], nan), ([1.0, 2.0, 0.0], 0.0)])
@pytest.mark.parametrize("first", ["*", "+"])
def test_a_dense_vector_read_by_two_parts(a_values, a_fill, first):
    a = Tensor.from_numpy(np.array(a_values), "sparse", fill=a_fill)
    b = Tensor.from_numpy(np.array([0.0, -inf, 0.0]), "sparse")
    c = np.array([0.5, 0.0, 4.0])
    A, B, C = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    na, nb = a.to_numpy(), b.to_numpy()
    with np.errstate(invalid="ignore"):
        head, want_head = (A * B, na * nb) if first == "*" else (A + B, na + nb)
        one_lattice_kernel(xp.stack([head, B * C, C], axis=1), np.stack([want_head, nb * c, c], axis=1))


def test_a_dense_matrix_read_by_two_parts():
    a = Tensor.from_numpy(np.array([[1.0, 0], [0, 2], [3, 0]]), "coo")
    b = Tensor.from_numpy(np.array([[0.0, 0], [-inf, 0], [0, 1]]), "csr")
    c = np.array([[0.5, 1], [0, 2], [4, 0]])
    A, B, C = xp.asarray(a), xp.asarray(b), xp.asarray(c)
    na, nb = a.to_numpy(), b.to_numpy()
    with np.errstate(invalid="ignore"):
        for axis in (1, 2):
            one_lattice_kernel(xp.stack([A * B, B * C, C], axis=axis), np.stack([na * nb, nb * c, c], axis=axis))
