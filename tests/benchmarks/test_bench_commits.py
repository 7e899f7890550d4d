"""benchmarks/bench_commits.py runs (on tiny inputs; it is tested for running, for checking each
revision's results and for timing each revision's own compiler, never for its timings)."""

import subprocess
from pathlib import Path

import pytest
from tests.benchmarks.bench_modules import load_bench

ROOT = Path(__file__).resolve().parents[2]
OLD = "9707a85"   # the parent of the lattice strategy's re-seating (issue 29)


@pytest.fixture(scope="module")
def bench():
    return load_bench("bench_commits")


def has_commit(rev: str) -> bool:
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}^{{commit}}"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(not has_commit(OLD), reason=f"not a git checkout holding {OLD}")
def test_quick_times_both_revisions_interleaved_and_prints_the_ratios(bench, capsys, tmp_path):
    rows = bench.main(["--quick", "--rounds", "2", "--only", "spmv,add", "--new", "worktree",
                       "--work", str(tmp_path)])
    out = capsys.readouterr().out
    assert [(r.kernel, r.strategy) for r in rows] == [("spmv", "lattice"), ("add", "lattice"),
                                                      ("spmv", "looplets"), ("add", "looplets")]
    old_tree = tmp_path / "trees" / bench.resolve(OLD)[0]
    for r in rows:
        assert not r.error, r.error
        # each revision's child imported its own tree's compiler, and checked its result
        assert Path(r.compilers["old"]).resolve().is_relative_to(old_tree.resolve()), r.compilers
        assert Path(r.compilers["new"]).resolve().is_relative_to(ROOT / "compiler"), r.compilers
        assert len(r.rounds["old"]) == len(r.rounds["new"]) == 2    # interleaved rounds, as many calls each
        assert [len(t) for t in r.rounds["old"]] == [len(t) for t in r.rounds["new"]]
        assert min(r.times["old"] + r.times["new"]) > 0
        assert r.ratio("min") > 0 and r.ratio("med") > 0 and r.ratio("paired") > 0
    assert "new/old min" in out and "paired" in out and out.count("geometric mean new/old") == 3
    assert f"old: {bench.resolve(OLD)[0][:10]}" in out and "new: worktree" in out


def test_a_revision_whose_child_cannot_run_is_reported_not_timed(bench, tmp_path):
    empty = tmp_path / "no-compiler"
    empty.mkdir()
    row = bench.measure("spmv", "lattice", {"old": empty, "new": bench.ROOT},
                        {"old": tmp_path / "c1", "new": tmp_path / "c2"}, quick=True, rounds=1)
    assert row.error.startswith("old: ") and not row.times
    bench.report([row])


def test_an_unknown_revision_is_refused_naming_it(bench):
    with pytest.raises(SystemExit, match="'no-such-rev' is no revision"):
        bench.main(["--quick", "--old", "no-such-rev"])
