"""The kernels that check a level format as an input of the lattice strategy, shared by the tests of
RunList and SparseRunList (test_lattice_runs) and of SparseBand, SparseBlockList, SparsePoint and
SparseInterval (test_lattice_band_block): SpMV, an elementwise sum into CSR, an elementwise product
into a dense output and a diagonal over a matrix whose second level is the format, and over a vector
of it; each checked by :func:`compiler.testing.check_lowered` (the oracle, the IR interpreter and a
bounds-checked build).

>>> from compiler.levels import SparseList
>>> level_matrix(np.eye(2), 0.0, SparseList).to_numpy().tolist()
[[1.0, 0.0], [0.0, 1.0]]
"""

from functools import partial

import numpy as np

from compiler import Tensor, evaluate
from compiler.format import Format, csr, dense, sparse_vector
from compiler.lattice import Setup, build_cfir, interpret_cfir
from compiler.levels import Dense, Element
from compiler.notation import parse
from compiler.testing import check_lowered

#: program -> the output's format for a fill (None: the default); a matrix A of the level with
#: another matrix B or a vector x
MATRIX = {
    "y[i] = A[i, j] * x[j]": None,
    "C[i, j] = A[i, j] + B[i, j]": csr,
    "C[i, j] = A[i, j] * B[i, j]": partial(dense, 2),
    "y[i] = A[i, i]": None,
}
#: likewise for a vector v of the level with another vector w (or a matrix A)
VECTOR = {
    "y[i] = A[i, j] * v[j]": None,
    "z[i] = v[i] + w[i]": sparse_vector,
    "z[i] = v[i] * w[i]": partial(dense, 1),
    "s = v[i] * w[i]": None,
}


def level_matrix(a, fill, level) -> Tensor:
    """``a`` stored in rows of ``level`` (values of ``fill``) under a Dense level."""
    return Tensor.from_numpy(a, Format(Dense(level(Element(fill)))))


def level_vector(v, fill, level) -> Tensor:
    """``v`` stored in ``level``."""
    return Tensor.from_numpy(v, Format(level(Element(fill))))


def matrix_case(prog, a, b, x, fill, level, outputs=MATRIX):
    """The kernel of ``prog`` (a key of ``outputs``) over ``a`` in ``level``, ``b`` in CSR and the
    vector ``x``, each as the program reads them, checked; returns the kernel."""
    tensors = {"A": level_matrix(a, fill, level)}
    if "B[" in prog:
        tensors["B"] = Tensor.from_numpy(b, csr(fill))
    if "x[" in prog:
        tensors["x"] = x
    make = outputs[prog]
    return check_lowered(prog, out=make(fill) if make else None, checked=True, **tensors)


def vector_case(prog, a, v, w, fill, level, outputs=VECTOR):
    """The kernel of ``prog`` (a key of ``outputs``) over ``v`` in ``level``, ``w`` a sparse vector
    and ``a`` in CSR, each as the program reads them, checked; returns the kernel."""
    tensors = {"v": level_vector(v, fill, level)}
    if "w[" in prog:
        tensors["w"] = Tensor.from_numpy(w, sparse_vector(fill))
    if "A[" in prog:
        tensors["A"] = Tensor.from_numpy(a, csr())
    make = outputs[prog]
    return check_lowered(prog, out=make(fill) if make else None, checked=True, **tensors)


def interpreted_case(prog, tensors):
    """``prog`` by the lattice's CFIR interpreter over those of ``tensors`` it reads, against the
    oracle (the level's ``py_fiber`` walks the fibers there)."""
    tensors = {t: v for t, v in tensors.items() if f"{t}[" in prog}
    p = parse(prog)
    setup = Setup.create(p, {n: t.format for n, t in tensors.items()})
    got = interpret_cfir(build_cfir(setup.statement, setup), setup, **tensors)
    np.testing.assert_allclose(got, evaluate(p, **tensors)[0])
