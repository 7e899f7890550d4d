"""benchmarks/bench_case_studies.py runs (on tiny inputs; it is tested for running and for checking
its results, never for its timings), with its optional baselines and without them."""

import importlib.util
import sys

import pytest
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_case_studies")


def test_quick_on_tiny_inputs_prints_every_case_and_the_geometric_means(bench, capsys):
    report = bench.main(["--quick", "--scale", "0.05", "--repeat", "1"])
    out = capsys.readouterr().out
    for case in ("SpMV", "SpGEMM", "triangles", "BFS push", "BFS auto", "B-Ford", "erosion", "histogram"):
        assert f"\n{case} " in out, case
    assert "paper: 2.47x faster" in out and "paper: 19.5x on sketches" in out
    for words in ("dense words", "sparse words", "bool in and out"):   # (the bitwise erosion's rows)
        assert f"bitwise, {words}" in out, words
    assert "geometric means" in out
    assert "scipy" in report.ratios and "numpy" in report.ratios
    have = {m: importlib.util.find_spec(m) is not None for m in ("graphblas", "cv2", "sklearn")}
    assert ("GraphBLAS 1t" in report.ratios) == have["graphblas"]
    # (Bellman-Ford also against distances and parents round by round, LAGraph_BF_full1a's way; its tree checked)
    assert ("GB BF_full1a 1t" in report.ratios) == have["graphblas"] == ("vs the tree's (BF_full1a)" in out)
    assert ("OpenCV" in report.ratios) == have["cv2"]
    assert ("digits x" in out) == have["sklearn"]   # (a case label; the skip message names the digits too)


def test_a_missing_baseline_is_skipped_saying_so(bench, capsys, monkeypatch):
    for module in ("graphblas", "cv2", "sklearn", "sklearn.datasets"):
        monkeypatch.setitem(sys.modules, module, None)   # (import raises ImportError)
    report = bench.main(["--quick", "--scale", "0.05", "--repeat", "1", "--only", "graphs,images"])
    out = capsys.readouterr().out
    assert "python-graphblas is not installed: its baseline is skipped" in out
    assert "opencv-python-headless is not installed" in out
    assert "scikit-learn is not installed: the digits are skipped" in out
    assert set(report.ratios) == {"numpy"}
