"""benchmarks/bench_shape_bound.py runs each Fig. 24 and 25 kernel, scipy's call and a hand-written
C bound on a small matrix, each result checked against scipy's; tested for what it checks, never
for its timings."""

import numpy as np
import pytest
import scipy.sparse as sp
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_shape_bound")


@pytest.mark.parametrize("n, nnz", [(61, 500), (8, 0)])   # odd halves; no entries at all
def test_every_row_is_checked_against_scipy_and_printed(bench, capsys, n, nnz):
    bench.main(["--n", str(n), "--nnz", str(nnz), "--repeat", "1", "--clock", "cpu"])
    out = capsys.readouterr().out
    for fig in ("24a", "24b", "24c", "24d", "24e", "24f", "25a", "25b", "25c", "25d", "25e", "25f"):
        assert f"\n{fig} " in out, fig
    assert "Fig. 25 geometric mean over scipy (6 rows)" in out


def test_only_runs_the_rows_asked_for(bench, capsys):
    bench.main(["--n", "40", "--nnz", "200", "--repeat", "1", "--only", "25a,24e"])
    out = capsys.readouterr().out
    assert "\n25a " in out and "\n24e " in out and "\n25b " not in out


def test_a_result_other_than_scipys_is_an_error(bench):
    ref = sp.random(5, 4, density=0.5, format="csr", random_state=np.random.default_rng(1))
    bench._same("same", ref.tocoo(), ref)
    wrong = ref.copy()
    wrong.data[0] += 1
    with pytest.raises(AssertionError, match="wrong: the result differs"):
        bench._same("wrong", wrong, ref)
