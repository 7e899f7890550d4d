import itertools
import math
import re

import pytest

from explorer.timing import AGREES, DIFFERS, Comparison, Row, TimingStats, compare, format_seconds, time_callable


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


def _comparison(medians: dict[str, float]) -> Comparison:
    """Fixed timings (no clock): each row's samples are its median and 10% either side."""
    rows = []
    base = next(iter(medians.values()))
    for name, m in medians.items():
        rows.append(Row(name, TimingStats((0.9 * m, m, 1.1 * m), 1), m / base))
    return Comparison(rows)


def _bars(svg: str):
    rects = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', svg)]
    whiskers = [(float(a), float(b)) for a, b in re.findall(r'class="iqr" x1="([\d.]+)" x2="([\d.]+)"', svg)]
    values = [(float(x), t) for x, t in re.findall(r'<text class="value" x="([\d.]+)"[^>]*>([^<]*)<', svg)]
    return rects, whiskers, values


def test_the_plot_is_logarithmic_and_labels_clear_whiskers_and_edge():
    # the kernel, scipy 3x slower, numpy 300x slower: on a linear scale the first two bars
    # were 1-3 px wide and the whiskers ran through the value labels
    c = _comparison({"kernel": 2e-6, "scipy": 6e-6, "numpy": 6e-4})
    svg = c.svg()
    rects, whiskers, values = _bars(svg)
    assert len(rects) == len(whiskers) == len(values) == 3
    assert min(rects) >= 30   # every bar readable
    # equal ratios, equal steps: 6e-6/2e-6 = 3 and 6e-4/6e-6 = 100 -> step ratio log(100)/log(3)
    step1, step2 = rects[1] - rects[0], rects[2] - rects[1]
    assert abs(step2 / step1 - math.log(100) / math.log(3)) < 0.01
    width = float(re.search(r'<svg[^>]*width="(\d+)"', svg).group(1))
    for (x1, x2), (tx, text) in zip(whiskers, values):
        assert tx > x2 and tx > x1            # the label starts after its whisker
        assert tx + 6.5 * len(text) <= width  # and ends inside the drawing
    assert 'fill="currentColor"' in svg and "10 us" in svg and "1 ms" in svg   # decade ticks


def test_long_row_names_fit_left_of_their_bars():
    """A row name is drawn right-aligned, ending where its bar starts: the margin holds the
    longest (notebook 10's "unfused (flatten, then matvec)" was cut at the drawing's left edge
    to "(flatten, then matvec)"), and the bars and value labels move right with it."""
    for names in (["kernel", "scipy"], ["fused", "unfused (flatten, then matvec)", "scipy (vstack, then @)"]):
        c = _comparison({n: 1e-5 * (k + 1) for k, n in enumerate(names)})
        svg = c.svg()
        ends = [(float(x), t) for x, t in re.findall(r'<text x="([\d.]+)"[^>]*text-anchor="end">([^<]*)<', svg)]
        assert [t for _, t in ends] == names
        assert all(x - 6.5 * len(t) >= 0 for x, t in ends), ends
        rects = [float(x) for x in re.findall(r'<rect x="([\d.]+)"', svg)]
        assert all(r > x for r, (x, _) in zip(rects, ends))
        width = float(re.search(r'<svg[^>]*width="(\d+)"', svg).group(1))
        assert all(float(x) + 6.5 * len(t) <= width for x, t in _bars(svg)[2])


def test_decade_ticks_do_not_overlap():
    """Each decade is as wide as its tick labels need: seven decades (100 ns to 100 ms, a kernel next
    to dense numpy) in a fixed 170 px drew notebook 09's "10 ms" and "100 ms" into each other."""
    for times in ({"kernel": 5e-6, "scipy": 6e-6, "numpy (dense)": 3e-2}, {"kernel": 2e-6, "scipy": 3e-6}):
        svg = _comparison(times).svg()
        ticks = [(float(x), t) for x, t in re.findall(r'<text class="tick" x="([\d.]+)"[^>]*>([^<]*)<', svg)]
        assert len(ticks) >= 2, ticks
        # (9 px sans-serif: at most 5.3 px a character)
        spans = [(x - 5.3 * len(t) / 2, x + 5.3 * len(t) / 2) for x, t in ticks]
        assert all(a[1] + 2 <= b[0] for a, b in zip(spans, spans[1:])), ticks
        width = float(re.search(r'<svg[^>]*width="(\d+)"', svg).group(1))
        assert spans[0][0] >= 0 and spans[-1][1] <= width, (ticks, width)


def test_checks_take_the_themes_colours():
    """A check's "agrees" and "DIFFERS" are drawn in the theme's colours (readable on its dark
    background too; the browser test measures them), with a light page's fallbacks."""
    c = _comparison({"kernel": 1e-5, "scipy": 2e-5, "numpy": 3e-5})
    c.checks.update(scipy=True, numpy=False)
    html = c.html()
    assert f"color:{AGREES}'>check scipy: agrees" in html and f"color:{DIFFERS}'>check numpy: DIFFERS" in html
    assert AGREES.startswith("var(--jp-") and DIFFERS.startswith("var(--jp-")
