"""The kernels that check a level format as an input of the lattice strategy, shared by the tests of
RunList and SparseRunList (test_lattice_runs) and of SparseBand, SparseBlockList, SparsePoint and
SparseInterval (test_lattice_band_block): SpMV, an elementwise sum into CSR, an elementwise product
into a dense output and a diagonal over a matrix whose second level is the format, and over a vector
of it; each checked by :func:`compiler.testing.check_lowered` (the oracle, the IR interpreter and a
bounds-checked build). And a level's fibers walked backwards through its iterator alone
(:func:`check_walks_back`).

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


def walked_back(t: Tensor, parent: int, steps: int, target: int | None = None) -> tuple:
    """The last level of ``t`` (its array's name ``A``) walked backwards through its lattice iterator's IR
    alone, in the IR interpreter: the fiber under ``parent`` from its last position, the block it keeps
    beside moved down with it (``block_last``, ``block_sync_back``), ``steps`` steps down, then (given a
    ``target`` below the coordinate there) its ``seek_back_stmts`` to the last coordinate at most the target.
    Returns ``(coordinate, child)`` where the walk ends, None past the fiber's first position."""
    from compiler.imperative.interpreter import interpret
    from compiler.imperative.ir import (Assign, BinOp, Buffer, CompoundAssign, Const, Declare, Function, If, OutScalar,
                                        Scalar, Var, While, and_)
    from compiler.lattice.iterators import mode_iterators, py_arrays
    it = mode_iterators("A", "A", t.format)[-1]
    arrays, sizes = py_arrays("A", t)
    up, p, end, r, k = Var("up"), Var("p"), Var("end"), Var("r"), Var("k")
    one = Const(1, "int64")
    lo, hi = it.bounds(up)
    body = [Declare(r, "int64", it.block_last(up)), Declare(p, "int64", BinOp("-", hi, one)),
            Declare(end, "int64", BinOp("-", lo, one)), Declare(k, "int64", Const(0, "int64")),
            While(and_(BinOp("<", k, Const(steps, "int64")), BinOp(">", p, end)),
                  [CompoundAssign("-", p, one), If(BinOp(">", p, end), it.block_sync_back(p, r, up)),
                   CompoundAssign("+", k, one)])]
    if target is not None:
        body.append(If(BinOp(">", p, end), it.seek_back_stmts(p, end, Const(target, "int64"), up, r)))
    body.append(If(BinOp(">", p, end), [Assign(Var("valid"), Const(True, "bool")),
                                         Assign(Var("coord"), it.coord(p, up, r)),
                                         Assign(Var("child"), it.child(p, None, up, r))]))
    params = ([Scalar("up", "int64")] + [Scalar(n, "int64") for n in sizes]
              + [Buffer(n, a.dtype.name) for n, a in arrays.items()]
              + [OutScalar("valid", "bool", False), OutScalar("coord", "int64", 0), OutScalar("child", "int64", 0)])
    out = interpret(Function("walk_back", params, body), up=parent, **arrays, **sizes)
    return (int(out["coord"]), int(out["child"])) if out["valid"] else None


def check_walks_back(t: Tensor) -> None:
    """Every fiber of ``t``'s last level walked backwards (:func:`walked_back`) visits its ``py_fiber``'s
    entries in reverse, and a seek from each of them to each target below (to -2: a strided slice's target
    may be past the fiber's first coordinate) ends at the last entry at or below the target."""
    from compiler.lattice.iterators import mode_iterators, py_arrays
    it = mode_iterators("A", "A", t.format)[-1]
    arrays, sizes = py_arrays("A", t)
    for parent in range(int(np.prod(t.shape[:-1], dtype=np.int64))):
        fiber = it.py_fiber(arrays, sizes, parent)[::-1]
        assert [walked_back(t, parent, k) for k in range(len(fiber) + 1)] == fiber + [None], parent
        for k, (c, _) in enumerate(fiber):
            for target in range(-2, c):
                want = next((e for e in fiber[k:] if e[0] <= target), None)
                assert walked_back(t, parent, k, target) == want, (parent, k, target)
