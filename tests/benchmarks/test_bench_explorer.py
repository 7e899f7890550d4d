"""benchmarks/bench_explorer.py runs on the tour's views and re-lowerings (on a smaller matrix) and
reports every step and every format change; it is tested for what it measures and checks, never
for its timings."""

import pytest
from tests.benchmarks.bench_modules import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_explorer")


def test_quick_reports_every_step_of_every_view_and_every_format_change(bench, capsys, monkeypatch):
    import compiler as ss

    monkeypatch.setenv("SPARSESCOPE_CACHE_DIR", "")   # restored after: the benchmark takes a fresh cache
    report = bench.main(["--quick", "--n", "200"])
    out = capsys.readouterr().out
    assert "redrawing a step (target < 0.3 s)" in out and "re-lowering after a format change (target < 1.0 s)" in out
    views = {r.view: r for r in report.redraws}
    assert set(views) == {"Explorer (lattice)", "Explorer (looplets)", "Compare (stage slider)",
                          "Explorer.for_program, dcsr"}
    # every step of each lowering was drawn, first and again, and printed
    # (lowered, as the benchmark's, for a tensor over a scipy matrix: its kernels check its coordinates as they read
    # them, the owned-coordinates step)
    S, x = bench.tour_data(20)
    lattice = ss.lower(bench.SPMV, "lattice", A=ss.Tensor.from_scipy(S), x=x).trace
    looplets = ss.lower(bench.SPMV, "looplets", A=ss.Tensor.from_scipy(S), x=x).trace
    assert "owned-coordinates" in lattice.stages() and "owned-coordinates" in looplets.stages()
    # (a call with a scipy matrix adds a foreign-layout step to a cached kernel's trace afterwards)
    def lowering(stages):
        return [s for s in stages if s != "foreign-layout"]
    assert lowering(views["Explorer (lattice)"].stages) == lowering(lattice.stages())
    assert lowering(views["Explorer (looplets)"].stages) == lowering(looplets.stages())
    assert len(views["Compare (stage slider)"].first) >= max(len(lattice), len(looplets))
    for r in report.redraws:
        assert len(r.first) == len(r.again) == len(r.stages) and min(r.first) > 0
        assert f"\n{r.view} " in out
    # each strategy and view: the opening and each change, the first time cold (compiled) and
    # then warm; each re-lowered kernel was checked against scipy as it ran
    changes = [f"{a} -> {b}" for a, b in zip(("csr",) + bench.CHANGES, bench.CHANGES)]
    for strategy in ("lattice", "looplets"):
        for view in ("Explorer.for_program", "Playground"):
            rows = [r for r in report.relowers if (r.view, r.strategy) == (view, strategy)]
            assert [r.change for r in rows] == ["open (csr)", *changes]
            assert all(r.seconds > 0 for r in rows)
        first = [r for r in report.relowers if r.strategy == strategy and r.view == "Explorer.for_program"]
        assert [r.cold for r in first] == [True, True, True, False, False]
    assert out.count(" cold ") == 6 and out.count(" warm ") == 14

