"""SpGEMM three ways (inner products, Gustavson with a SparseByteMap workspace, outer
products into SparseHash) and SparseHash read protocols, each against numpy."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import Dense, Element, SparseByteMap, SparseHash
from compiler.looplets import compile_program, loop_program
from compiler.looplets.gallery import gustavson, inner, inner_gallop, outer, spmv

HASH = Dense(SparseHash(Element(0.0)))


def rand(shape, density, seed):
    rng = np.random.default_rng(seed)
    return np.where(rng.random(shape) < density, rng.random(shape) + 0.5, 0.0)


SHAPES = [((1, 1, 1), 1.0), ((7, 5, 9), 0.3), ((30, 20, 25), 0.15), ((12, 40, 3), 0.05), ((4, 6, 5), 0.0)]


@pytest.mark.parametrize("dims,density", SHAPES)
def test_outer_products_into_sparse_hash(dims, density):
    m, k, n = dims
    Ad, Bd = rand((m, k), density, 1), rand((k, n), density, 2)
    A, B = Tensor.from_numpy(Ad, "csc"), Tensor.from_numpy(Bd, "csr")
    kern = compile_program(outer, C=HASH, A=A, B=B)
    C = kern(A=A, B=B)
    C.validate()  # sorted view, keys and table agree
    np.testing.assert_allclose(C.to_numpy(), Ad @ Bd)
    assert C.levels[1].name == "SparseHash"


@loop_program
def copy(C, A):
    for i in _:
        for j in _:
            C[i, j] += A[i, j]


@loop_program
def spmv_follow(y, A, x):
    for i in _:
        for j in _:
            y[i] += A[i, follow(j)] * x[j]


def test_sparse_hash_reads_walk_follow_and_gallop():
    Md = rand((9, 14), 0.3, 5)
    A = Tensor.from_numpy(Md, HASH)
    xd = np.arange(14.0) + 1
    x = Tensor.from_numpy(xd, "dense")
    @loop_program
    def spmv_gallop(y, A, x):
        for i in _:
            for j in _:
                y[i] += A[i, gallop(j)] * x[j]
    for prog in (spmv, spmv_follow, spmv_gallop):
        np.testing.assert_allclose(compile_program(prog, y="dense", A=A, x=x)(A=A, x=x).to_numpy(), Md @ xd)
    assert "tbl" in compile_program(spmv_follow, y="dense", A=A, x=x).c_source  # located by probing
    # a hash output written in order reads back
    C = compile_program(copy, C=HASH, A=Tensor.from_numpy(Md, "csr"))(A=Tensor.from_numpy(Md, "csr"))
    C.validate()
    np.testing.assert_array_equal(C.to_numpy(), Md)


@pytest.mark.parametrize("dims,density", SHAPES)
def test_gustavson_with_a_byte_map_workspace(dims, density):
    m, k, n = dims
    Ad, Bd = rand((m, k), density, 3), rand((k, n), density, 4)
    A, B = Tensor.from_numpy(Ad, "csr"), Tensor.from_numpy(Bd, "csr")
    kern = compile_program(gustavson, C="csr", A=A, B=B)
    C = kern(A=A, B=B)
    C.validate()
    np.testing.assert_allclose(C.to_numpy(), Ad @ Bd)
    src = kern.c_source
    assert "w0_tbl" in src and "C1_idx" in src and "free(w0_tbl)" in src  # an Allocate'd workspace row
    assert "w" not in kern.formats  # a temporary is neither passed in nor returned
    # re-declaring the workspace resets only the coordinates it wrote
    assert "w0_tbl[w0_srt[t]] = false" in src


@pytest.mark.parametrize("dims,density", SHAPES)
def test_inner_products_dot_rows_of_csr_operands(dims, density):
    m, k, n = dims
    Ad, Bd = rand((m, k), density, 5), rand((n, k), density, 6)  # C = A B^T
    A, B = Tensor.from_numpy(Ad, "csr"), Tensor.from_numpy(Bd, "csr")
    for prog in (inner, inner_gallop):
        for out in ("dense", "csr"):
            C = compile_program(prog, C=out, A=A, B=B)(A=A, B=B)
            C.validate()
            np.testing.assert_allclose(C.to_numpy(), Ad @ Bd.T)


def test_temporary_must_be_declared_with_its_fill():
    @loop_program
    def bad(C, A, B, w=SparseByteMap(Element(0.0))):
        for i in _:
            w[...] = 1.0
            for k in _:
                for j in _:
                    w[j] += A[i, k] * B[k, j]
            for j in _:
                C[i, j] = w[j]
    A = Tensor.from_numpy(rand((3, 3), 0.5, 1), "csr")
    with pytest.raises(Exception, match="declare it with its fill"):
        compile_program(bad, C="csr", A=A, B=A)


def test_spgemm_kernels_agree_in_the_ir_interpreter():
    """The IR (Allocate'd workspace, hash probing, the freeze's radix sort) runs the same in
    the Python interpreter as in C."""
    Ad, Bd = rand((6, 5), 0.4, 7), rand((5, 7), 0.4, 8)
    A, B, Ac = Tensor.from_numpy(Ad, "csr"), Tensor.from_numpy(Bd, "csr"), Tensor.from_numpy(Ad, "csc")
    np.testing.assert_allclose(compile_program(gustavson, C="csr", A=A, B=B).interpret(A=A, B=B).to_numpy(),
                               Ad @ Bd)
    np.testing.assert_allclose(compile_program(outer, C=HASH, A=Ac, B=B).interpret(A=Ac, B=B).to_numpy(), Ad @ Bd)
