"""The lattice strategy's C compiles without a warning under ``-Wall -Wextra -Wshadow``.

Students read this C: a parameter nothing reads, a local hiding another of the same name, an
unused variable or a comparison that is always true are each a question they should not have to
ask. GCC finds them; one kernel of each family a user meets is checked here, with the warnings
made errors. (Capacity tests known to hold and stores overwritten before a read are not warnings:
tests/compiler/imperative/test_cleanup.py and the kernels' own tests look for those.)
"""

import math
import subprocess

import pytest

import compiler as ss
from compiler import user_function
from compiler.backend.build import compiler_command, is_gcc, openmp_support
from compiler.format import Format, coo, csc, csf, csr, dcsr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseHash,
                             SparseList, SparseRunList)

inf = math.inf
MASK = user_function("mask", lambda v, m: 0.0 if m else v, "return y ? 0.0 : x;", algebra="x & !y", dtype="float64")
MAT = {"csr": csr, "csc": csc, "coo": coo, "dcsr": dcsr, "dense": lambda **k: dense(2, **k)}
VEC = {"dense": lambda **k: dense(1, **k), "sparse": sparse_vector,
       "bytemap": lambda **k: Format(SparseByteMap(Element(k.get("fill", 0.0)))),
       "hash": lambda **k: Format(SparseHash(Element(k.get("fill", 0.0))))}
GUSTAVSON = Schedule().reorder("i", "k", "j").precompute("j", "w")


def _kernels():
    out = []

    def add(name, prog, options=None, functions=None, **formats):
        out.append(pytest.param(prog, options, functions, formats, id=name))
    for fa in MAT:
        add(f"spmv-{fa}", "y[i] = A[i, j] * x[j]", A=MAT[fa](), x=dense(1))
        add(f"spmspv-{fa}-to-sparse", "y[i] = A[i, j] * x[j]", A=MAT[fa](), x=sparse_vector(), y=sparse_vector())
        add(f"min-plus-{fa}", "y[i] = min[j](A[i, j] + x[j])", A=MAT[fa](fill=inf), x=sparse_vector(fill=inf))
        add(f"masked-{fa}", "y[i] = mask(A[i, j] * x[j], m[i])", functions={"mask": MASK}, A=MAT[fa](), x=dense(1),
            m=sparse_vector(fill=False, dtype="bool"))
        for red in ("sum", "max"):
            add(f"{red}-all-{fa}", f"s = {red}[i, j](A[i, j])", A=MAT[fa]())
            add(f"{red}-rows-{fa}-fill-2", f"y[i] = {red}[j](A[i, j])", A=MAT[fa](fill=2.0))
            add(f"{red}-columns-{fa}", f"y[j] = {red}[i](A[i, j])", A=MAT[fa]())
    for fb in VEC:
        for fc in VEC:
            add(f"add-{fb}-{fc}", "a[i] = b[i] + c[i]", b=VEC[fb](), c=VEC[fc](), a=sparse_vector())
            add(f"dot-{fb}-{fc}", "s = sum[i](b[i] * c[i])", b=VEC[fb](), c=VEC[fc]())
    for fmts in ("sss", "dds", "sds", "dsd"):
        b, c, d = (VEC["dense" if f == "d" else "sparse"]() for f in fmts)
        add(f"bcd-{fmts}", "a[i] = b[i] * (c[i] + d[i])", b=b, c=c, d=d, a=sparse_vector())
        for what, prog in (("times", "a[i] = b[i] * (c[i] + d[i])"), ("max", "a[i] = max(b[i], c[i] + d[i])")):
            add(f"b-{what}-c+d-precomputed-{fmts}", prog,
                {"schedule": Schedule().precompute("i", "w", expr="c[i] + d[i]")}, b=b, c=c, d=d)
    for fz in ("dense", "sparse"):
        add(f"csc-y=Ax+z-precomputed-z-{fz}", "y[i] = A[i, j] * x[j] + z[i]",
            {"schedule": Schedule().precompute("i", "w", expr="A[i, j] * x[j]")}, A=csc(), x=dense(1), z=VEC[fz]())
        add(f"csc-y=Ax+z-sequence-z-{fz}", "y[i] = A[i, j] * x[j] + z[i]", A=csc(), x=dense(1), z=VEC[fz]())
    for fo in ("csr", "dcsr", "coo", "dense"):
        out_fmt = {} if fo == "dense" else {"C": MAT[fo]()}
        for op in "+*":
            add(f"csr{op}csr-to-{fo}", f"C[i, j] = A[i, j] {op} B[i, j]", A=csr(), B=csr(), **out_fmt)
        if fo != "dense":
            add(f"csr+csr-to-{fo}-two-phase", "C[i, j] = A[i, j] + B[i, j]", {"assembly": "two-phase"},
                A=csr(), B=csr(), **out_fmt)
        add(f"csr+csr-to-{fo}-threads", "C[i, j] = A[i, j] + B[i, j]", {"schedule": Schedule().parallelize("i")},
            A=csr(), B=csr(), **out_fmt)
        add(f"spgemm-to-{fo}", "C[i, j] = A[i, k] * B[k, j]", {"schedule": GUSTAVSON}, A=csr(), B=csr(), **out_fmt)
        add(f"spgemm-to-{fo}-threads", "C[i, j] = A[i, k] * B[k, j]",
            {"schedule": GUSTAVSON.parallelize("i")}, A=csr(), B=csr(), **out_fmt)
    add("bool-min-fold", "y[i] = min(min[j](A[i, j] * x[j]), min[k](A[i, k]))", A=coo(fill=False, dtype="bool"),
        x=dense(1, dtype="float32"), y=sparse_vector())
    add("bool-max-of-sum", "C[i, k] = max(sum[j](A[i, j] * B[j, k]), D[i, k])", A=csr(fill=False, dtype="bool"),
        B=dense(2, dtype="bool"), D=csr(fill=True, dtype="bool"), C=csr())
    add("ttv-csf", "A[i, j] = B[i, j, k] * c[k]", B=csf(3), c=dense(1))
    add("mttkrp-csf", "A[i, j] = B[i, k, l] * C[k, j] * D[l, j]", B=csf(3), C=dense(2), D=dense(2))
    add("xor-fill-1", "a[i] = xor(b[i], c[i])", b=sparse_vector(fill=1, dtype="int64"),
        c=sparse_vector(fill=1, dtype="int64"), a=sparse_vector(fill=0, dtype="int64"))
    add("pow-fill-2", "a[i] = pow(b[i], c[i])", b=sparse_vector(fill=2.0), c=sparse_vector(fill=1.0))
    add("spmv-split-down", "y[i] = A[i, j] * x[j]", {"schedule": Schedule().split("i", "i0", "i1", 4)},
        A=dcsr(), x=dense(1))
    add("spmv-split-up", "y[i] = A[i, j] * x[j]", {"schedule": Schedule().split("i", "i0", "i1", 4, "up")},
        A=csr(), x=dense(1))
    add("spmv-threads", "y[i] = A[i, j] * x[j]", {"schedule": Schedule().parallelize("i")}, A=csr(), x=dense(1))
    for races in ("atomics", "copies"):
        add(f"csc-spmv-threads-{races}", "y[i] = A[i, j] * x[j]",
            {"schedule": Schedule().parallelize("j", races=races)}, A=csc(), x=dense(1))
    for name, level in (("runs", RunList), ("sparse-runs", SparseRunList)):
        def runs(fill=0.0, level=level):
            return Format(Dense(level(Element(fill))))
        add(f"spmv-{name}", "y[i] = A[i, j] * x[j]", A=runs(), x=dense(1))
        add(f"sum-rows-{name}", "y[i] = A[i, j]", A=runs())
        add(f"sum-rows-{name}-fill-2", "y[i] = A[i, j]", A=runs(2.0))
        add(f"diagonal-{name}", "y[i] = A[i, i]", A=runs())
        add(f"{name}+csr-to-csr", "C[i, j] = A[i, j] + B[i, j]", A=runs(), B=csr(), C=csr())
        add(f"csr+dcsr-to-{name}", "C[i, j] = A[i, j] + B[i, j]", A=csr(), B=dcsr(), C=runs())
        add(f"spmv-to-{name}", "y[i] = A[i, j] * x[j]", A=csr(), x=dense(1), y=Format(level(Element(0.0))))
    for name, level in (("band", SparseBand), ("blocks", SparseBlockList)):   # (appended by the kernel)
        add(f"csr*csr-to-{name}", "C[i, j] = A[i, j] * B[i, j]", A=csr(), B=csr(), C=Format(Dense(level(Element(0.0)))))
        add(f"dcsr-to-SparseList({name})", "C[i, j] = A[i, j]", A=dcsr(), C=Format(SparseList(level(Element(0.0)))))
        add(f"spmv-to-{name}", "y[i] = A[i, j] * x[j]", A=csr(), x=dense(1), y=Format(level(Element(0.0))))
    for name, root in (("SparseList(SparseHash)", SparseList(SparseHash(Element(0.0)))),
                       ("SparseHash(SparseHash)", SparseHash(SparseHash(Element(0.0)))),   # (keys kept as appended)
                       ("SparseList(SparseByteMap)", SparseList(SparseByteMap(Element(0.0))))):
        add(f"dcsr*dcsr-to-{name}", "C[i, j] = A[i, j] * B[i, j]", A=dcsr(), B=dcsr(), C=Format(root))
    for level in (SparseByteMap, SparseBand, SparseBlockList):   # (a block of Dense slots per position kept)
        add(f"csf+csf-to-Dense({level.name}(Dense))", "C[i, j, k] = A[i, j, k] + B[i, j, k]", A=csf(3), B=csf(3),
            C=Format(Dense(level(Dense(Element(0.0))))))
        add(f"csr-to-SparseList({level.name}(Dense))", "C[i, j, k] = A[i, j] * B[i, k]", A=csr(), B=csr(),
            C=Format(SparseList(level(Dense(Element(0.0))))))
    for level in (RunList, SparseRunList):   # (runs closed as the parent keeps the fiber)
        add(f"dcsr+dcsr-to-SparseList({level.name})", "C[i, j] = A[i, j] + B[i, j]", A=dcsr(), B=dcsr(),
            C=Format(SparseList(level(Element(0.0)))))
    return out


def _flags() -> list[str]:
    threads = ["-fopenmp"] if openmp_support() is None else ["-Wno-unknown-pragmas"]
    return ["-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Wshadow", "-Werror", *threads, "-x", "c", "-"]


@pytest.mark.skipif(not is_gcc(), reason="the warnings checked are GCC's")
@pytest.mark.parametrize("prog, options, functions, formats", _kernels())
def test_the_c_compiles_without_warnings(prog, options, functions, formats):
    k = ss.lower(prog, options=options, functions=functions, **formats)
    run = subprocess.run([*compiler_command(), *_flags()], input=k.c_source, text=True, capture_output=True)
    assert run.returncode == 0, f"{prog}:\n{run.stderr}\n{k.c_source}"
