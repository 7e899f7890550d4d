"""benchmarks/bench_cross.py times the cross product of a sparse n x 3 matrix with a vector, both strategies'
kernels beside numpy, scipy and pydata/sparse, each result checked against numpy's; tested for what it checks and
prints, never for its timings."""

import numpy as np
import pytest
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_cross")


@pytest.mark.parametrize("n, density, fmt", [(40, 0.5, "csr"), (6, 0.0, "csr"), (40, 0.5, "coo")])  # (6: no entries)
def test_every_column_is_timed_and_compared_with_numpy(bench, capsys, n, density, fmt):
    ms = bench.main(["--n", str(n), "--density", str(density), "--rounds", "1", "--clock", "cpu", "--format", fmt])
    out = capsys.readouterr().out
    assert set(ms) == {"numpy", "numpy+toarray", "scipy", "pydata", "lattice", "looplets", "compute", "bound"}
    assert f"A {n} x 3 {fmt.upper()}" in out and "numpy/lattice" in out and "pydata/looplets" in out, out


def test_a_column_whose_result_differs_from_numpys_stops_the_run(bench, monkeypatch):
    right = bench.columns

    def one_wrong(A, y, fmt):
        cols = right(A, y, fmt)
        good = cols["looplets"]
        cols["looplets"] = lambda: good().to_numpy() + 1.0
        return cols

    monkeypatch.setattr(bench, "columns", one_wrong)
    with pytest.raises(SystemExit, match="looplets"):
        bench.main(["--n", "20", "--rounds", "1"])
    assert np.array_equal(bench.as_dense(np.eye(2)), np.eye(2))
