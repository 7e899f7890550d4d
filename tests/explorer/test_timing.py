import itertools

import pytest

from explorer.timing import TimingStats, compare, format_seconds, time_callable


def test_time_callable_stats_with_a_fake_clock():
    ticks = itertools.count()
    calls = []
    stats = time_callable(lambda: calls.append(1), repeats=4, number=2, clock=lambda: next(ticks) * 0.5)
    assert len(stats.samples) == 4 and stats.number == 2
    assert len(calls) == 1 + 4 * 2  # warm-up plus the timed calls
    assert stats.samples == (0.25,) * 4 and stats.median == stats.min == 0.25 and stats.iqr == 0


def test_stats_quantiles():
    s = TimingStats((1.0, 2.0, 3.0, 4.0, 100.0), 1)
    assert s.median == 3.0 and s.min == 1.0 and s.max == 100.0
    assert s.q1 == 2.0 and s.q3 == 4.0 and s.iqr == 2.0
    assert "median 3.0 s" in str(s)


def test_auto_number_and_errors():
    stats = time_callable(lambda: None, repeats=2, target=0.001)
    assert stats.number >= 1 and len(stats.samples) == 2
    with pytest.raises(ValueError):
        time_callable(lambda: None, repeats=0)
    with pytest.raises(ZeroDivisionError):
        time_callable(lambda: 1 / 0)


def test_compare_table_ratios_checks_and_plot():
    import numpy as np
    import scipy.sparse as sp

    S = sp.random(200, 200, density=0.05, format="csr", random_state=0)
    x = np.ones(200)
    dense = S.toarray()
    c = compare(lambda: S @ x, {"numpy": lambda: dense @ x, "scipy": lambda: S @ x}, repeats=3, number=3,
                check=lambda a, b: np.allclose(a, b))
    assert [r.name for r in c.rows] == ["kernel", "numpy", "scipy"]
    assert c.rows[0].ratio == 1.0 and all(r.ratio > 0 for r in c.rows)
    assert c.checks == {"numpy": True, "scipy": True}
    table = c.table()
    assert "median" in table and "numpy" in table and "agrees" in table
    svg = c.svg()
    assert svg.startswith("<svg") and svg.count("<rect") == 3 and "http" not in svg.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    assert "<table" in c.html()
    print(table)


def test_format_seconds():
    assert format_seconds(2.0) == "2.0 s" and format_seconds(0.0) == "0.0 ns"
