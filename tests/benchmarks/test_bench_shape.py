"""benchmarks/bench_shape.py runs the 15 kernels of the paper's Figs. 24-26 by both strategies beside scipy's
(and pydata's) calls on a small matrix, each result checked against scipy's, over the tensors' own copies, over
scipy's arrays and over those arrays sealed read-only; tested for what it runs and checks, never for its timings."""

import pytest
import scipy.sparse as sp
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_shape")


@pytest.mark.parametrize("operands", [[], ["--shared"], ["--shared", "--sealed"]])
def test_every_kernel_runs_and_is_checked_against_scipy(bench, capsys, operands):
    bench.main(["--n", "40", "--nnz", "300", "--repeat", "1", "--clock", "cpu", "--no-pydata", *operands])
    out = capsys.readouterr().out
    for fig in ("24a", "24b", "24c", "24d", "24e", "24f", "25a", "25b", "25c", "25d", "25e", "25f",
                "26a", "26b", "26c"):
        assert f"\n{fig} " in out, fig
    assert "refused" not in out
    said = {(): "their own copies", ("--shared",): "(checked at each call)",
            ("--shared", "--sealed"): "sealed read-only"}[tuple(operands)]
    assert said in out.split("operands: ")[1].splitlines()[0]


def test_sealed_operands_are_scipys_own_arrays_so_need_shared(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--n", "30", "--nnz", "200", "--sealed"])
    assert "give --shared too" in capsys.readouterr().err


def test_a_result_other_than_scipys_is_an_error(bench):
    ref = sp.random(6, 5, density=0.5, format="csr", random_state=1)
    bench._check("same", ref.tocoo(), ref)
    wrong = ref.copy()
    wrong.data[0] += 1
    with pytest.raises(AssertionError, match="differs from scipy's"):
        bench._check("wrong", wrong, ref)
