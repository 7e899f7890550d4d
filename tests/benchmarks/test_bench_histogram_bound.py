"""benchmarks/bench_histogram_bound.py: its hand-written bounds count what numpy counts (they are the
measure the masked histogram is held to), and its run checks every column before timing it; tested
for what it checks, never for its timings."""

import numpy as np
import pytest

import compiler as ss
from compiler.looplets.histogram import MASK_LIST, MASK_RUNS
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_histogram_bound")


def masks():
    """Runs and lists with what trips a counting loop: empty rows, a run at each edge of a row, runs
    of 1 to 9 pixels (the four tables' tail), a full row, and no pixel at all."""
    m = np.zeros((6, 13), bool)
    m[0, :] = True
    m[2, 0] = m[2, 12] = True
    m[3, 2:11] = True
    m[4, 1:4] = m[4, 5:10] = True
    yield "crafted", m
    yield "empty", np.zeros((3, 8), bool)
    yield "no rows", np.zeros((0, 8), bool)
    yield "random", np.random.default_rng(3).random((9, 31)) < 0.4


@pytest.mark.parametrize("fmt", [MASK_RUNS, MASK_LIST], ids=["runs", "list"])
@pytest.mark.parametrize("variant", ["one", "four"])
def test_each_bound_counts_what_numpy_counts(bench, fmt, variant):
    ffi, lib = bench.load_bounds()
    for label, m in masks():
        img = np.random.default_rng(4).integers(0, 256, m.shape).astype(np.uint8)
        got = bench.bound_counts(ffi, lib, variant, img, ss.Tensor.from_numpy(m, fmt))
        np.testing.assert_array_equal(got, np.bincount(img[m] >> 4, minlength=16), err_msg=label)


def test_a_run_prints_every_row(bench, capsys):
    bench.main(["--quick", "--repeat", "1", "--clock", "cpu"])
    out = capsys.readouterr().out
    for label in ("sketches (2, 120x120)", "sketches x4", "scattered 1%", "disk 50%"):
        assert label in out, label
    assert "hand C x4" in out and "C kernel" in out
    assert "int x1" in out and "int x4" in out   # (the integer images' histogram, one table and four)
