"""The short property runs' plugin (property_run.py), which the sanitized run uses: which examples of
which tests it runs, read from a log the tests write."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SAMPLE = textwrap.dedent("""
    import os
    from hypothesis import example, given, strategies as st

    def log(name, x):
        with open(os.environ["RUNS_LOG"], "a") as f:
            f.write(f"{name} {x}\\n")

    @given(st.integers(10, 99))
    @example(1)
    @example(2)
    def test_pinned(x):
        log("pinned", x)

    @example(3)
    @given(st.integers(10, 99))
    def test_pinned_outside(x):
        log("pinned_outside", x)

    @given(st.integers(10, 99))
    @example(4)
    @example(5)
    @example(6)
    def test_three_pinned(x):
        log("three", x)

    @given(st.integers(10, 99))
    def test_drawn(x):
        log("drawn", x)

    def test_plain():
        log("plain", 0)
""")


def runs(tmp_path, *options) -> dict[str, list[int]]:
    """Run the sample tests with the plugin's ``options``; each test's examples, in the order run."""
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    log = tmp_path / "runs.log"
    log.unlink(missing_ok=True)
    env = dict(os.environ, RUNS_LOG=str(log), PYTHONPATH=str(ROOT))
    # (nbval not loaded: its import was 2 s of each run's 2.7)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbval", "-o", "addopts=",
                        "-p", "tests.compiler.backend.property_run", *options, str(tmp_path / "test_sample.py")],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    out: dict[str, list[int]] = {}
    for line in log.read_text().splitlines():
        name, x = line.split()
        out.setdefault(name, []).append(int(x))
    return out


def test_capped_runs_the_pinned_cases_and_the_first_drawn_examples_of_property_tests_only(tmp_path):
    got = runs(tmp_path, "--capped-examples", "2", "--property-tests-only")
    assert set(got) == {"pinned", "pinned_outside", "three", "drawn"}      # not the plain test
    assert sorted(got["pinned"])[:2] == [1, 2] and 3 <= len(got["pinned"]) <= 4
    assert got["pinned_outside"][0] == 3 and 2 <= len(got["pinned_outside"]) <= 3
    assert 1 <= len(got["drawn"]) <= 2 and all(10 <= x <= 99 for x in got["drawn"])


def test_pinned_first_runs_a_test_s_pinned_cases_alone_or_its_first_drawn_examples(tmp_path):
    got = runs(tmp_path, "--capped-examples", "2", "--pinned-examples-first", "--property-tests-only")
    assert sorted(got["pinned"]) == [1, 2]
    assert got["pinned_outside"] == [3]
    assert 1 <= len(got["drawn"]) <= 2 and all(10 <= x <= 99 for x in got["drawn"])
    # the same draws on every run (derandomized)
    assert runs(tmp_path, "--capped-examples", "2", "--pinned-examples-first")["drawn"] == got["drawn"]


def test_a_cap_on_pinned_cases_keeps_each_tests_first_cases_as_written(tmp_path):
    got = runs(tmp_path, "--capped-examples", "2", "--pinned-examples-first", "--pinned-examples-cap", "2",
               "--property-tests-only")
    assert got["three"] == [4, 5]          # (6, the third as written, is the suite's own run's)
    assert sorted(got["pinned"]) == [1, 2] and got["pinned_outside"] == [3]
    assert runs(tmp_path, "--capped-examples", "2", "--pinned-examples-first",
                "--property-tests-only")["three"] == [4, 5, 6]
