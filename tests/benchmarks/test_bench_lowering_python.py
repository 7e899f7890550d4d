"""benchmarks/bench_lowering_python.py runs (tested for running and for emitting the C a build
would compile, never for its timings)."""

import compiler.lowering as lowering
from compiler import array as xp
from compiler import lower
from compiler.tensor import Tensor
from tests.benchmarks.bench_modules import load_bench


def load():
    return load_bench("bench_lowering_python")


def test_the_array_group_dumps_the_c_a_build_compiles_and_restores_the_backend(tmp_path, capsys):
    bench = load()
    built = lowering.compile_function
    bench.main(["--only", "arrays", "--repeat", "1", "--dump", str(tmp_path), "--texts"])
    assert lowering.compile_function is built   # (the stand-in is gone: later lowerings build)
    out = capsys.readouterr().out
    assert "arrays      3 kernels" in out and "total" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{n}.{x}" for n in ("array_matvec", "array_sum_axis",
                                                                              "array_vstack") for x in ("c", "steps")]
    steps = (tmp_path / "array_matvec.steps").read_text()
    assert "== emit-c: C for kernel" in steps and "== unfurl" in steps
    # the C the stand-in emitted is the C the real lowering builds (the corpus' A and x rebuilt)
    A = Tensor.from_numpy(bench.rand((12, 10), 0.3, 1), "csr")
    kernel = lower(xp.asarray(A) @ xp.asarray(bench.rand(10, 1.0, 7)), strategy="looplets")
    assert (tmp_path / "array_matvec.c").read_text() == kernel.c_source
