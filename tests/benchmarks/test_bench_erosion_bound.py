"""benchmarks/bench_erosion_bound.py: its bitwise section's C driver calls the generated kernel with
the parameters the kernel takes now and counts what the compiled kernel leaves on (its run checks
that before timing); tested for what it checks, never for its timings. Its driver once passed a
parameter the kernel had stopped taking, and the section failed to build."""

import numpy as np
import pytest

from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_erosion_bound")


def test_the_bitwise_driver_runs_the_kernel_the_compiler_makes(bench, tmp_path, capsys):
    rng = np.random.default_rng(5)
    # widths that fill their last word and do not (the driver pads the last word with ones)
    imgs = [rng.random((9, 70)) < 0.8, np.ones((5, 128), bool), np.zeros((4, 3), bool)]
    bench.bitwise(tmp_path, [("tiny", imgs)], 1, None)
    out = capsys.readouterr().out
    assert "tiny" in out and "C kernel" in out and "hand C" in out
