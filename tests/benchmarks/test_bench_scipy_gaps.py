"""benchmarks/bench_scipy_gaps.py runs the column-major flatten beside a sparse vector (+ and *, with its hand-written
C bound) and A_csc[::-1] on small operands, each result checked against scipy's; tested for what it checks, never for
its timings."""

import numpy as np
import pytest
import scipy.sparse as sp
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_scipy_gaps")


@pytest.mark.parametrize("n, nnz", [(30, 200), (6, 0)])    # no entries at all
def test_every_row_is_checked_against_scipy_and_printed(bench, capsys, n, nnz):
    bench.main(["--n", str(n), "--nnz", str(nnz), "--rows", "40", "--cols", "7", "--rounds", "1", "--clock", "cpu"])
    out = capsys.readouterr().out
    for row in ("A.T.reshape(-1) + x", "A.T.reshape(-1) * x", "1% A_csc[::-1]", "10% A_csc[::-1]"):
        assert f"\n{row} " in out, out
    assert out.count("bound/scipy") == 2 and out.count("kernel/scipy") == 4, out


def test_a_result_other_than_scipys_is_no_match(bench):
    want = sp.csr_array(sp.random(1, 12, density=0.5, random_state=np.random.default_rng(2)))
    assert bench.same(want.copy(), want)
    wrong = want.copy()
    wrong.data[0] += 1
    assert not bench.same(wrong, want)
