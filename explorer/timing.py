"""Time a compiled kernel against baselines (numpy, scipy) and draw the result as inline SVG.

>>> stats = time_callable(lambda: sum(range(100)), repeats=5, number=10)
>>> len(stats.samples), stats.min <= stats.median <= max(stats.samples)
(5, True)
>>> c = compare(lambda: sum(range(100)), {"slower": lambda: sum(range(1000))}, repeats=3, number=5)
>>> [row.name for row in c.rows], c.rows[0].ratio
(['kernel', 'slower'], 1.0)
>>> c.svg().startswith("<svg")
True
"""

from __future__ import annotations

import html as _html
import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

__all__ = ["AGREES", "DIFFERS", "Comparison", "Row", "TimingStats", "compare", "format_seconds", "time_callable"]

#: A check's colour where the baseline agrees, and where it differs: the theme's (JupyterLab's
#: editor green and red, each with a light page's fallback), readable in the light and the dark
#: theme (the fixed #1a7f37 and #a00 were 3.7 and 2.4 against the dark theme's background).
AGREES = "var(--jp-mirror-editor-keyword-color, #1a7f37)"
DIFFERS = "var(--jp-mirror-editor-string-color, #a00)"


def format_seconds(t: float) -> str:
    """``1.5e-05`` -> ``'15.0 us'``.

    >>> format_seconds(1.5e-05), format_seconds(0.25), format_seconds(3e-9)
    ('15.0 us', '250.0 ms', '3.0 ns')
    """
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.1f} {unit}"
    return f"{t / 1e-9:.1f} ns"


@dataclass(frozen=True)
class TimingStats:
    """Per-call times in seconds: one sample per repeat (each the mean of ``number`` calls)."""

    samples: tuple[float, ...]
    number: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    @property
    def q1(self) -> float:
        return _quantile(self.samples, 0.25)

    @property
    def q3(self) -> float:
        return _quantile(self.samples, 0.75)

    @property
    def iqr(self) -> float:
        """The interquartile range: the spread of the middle half of the samples."""
        return self.q3 - self.q1

    @property
    def spread(self) -> float:
        """IQR relative to the median (0.05 means the middle half lies within 5%)."""
        return self.iqr / self.median if self.median else 0.0

    def __str__(self) -> str:
        return (f"median {format_seconds(self.median)}, min {format_seconds(self.min)}, "
                f"IQR {format_seconds(self.iqr)} ({len(self.samples)} x {self.number})")


def _quantile(xs, q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def time_callable(fn: Callable[[], Any], repeats: int = 7, number: int | None = None,
                  target: float = 0.02, clock: Callable[[], float] = time.perf_counter) -> TimingStats:
    """Time ``fn()``: ``repeats`` samples, each the mean over ``number`` calls.

    Without ``number``, it is chosen so that one sample takes about ``target`` seconds.
    One warm-up call runs first (and so any error surfaces before timing).
    """
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    fn()
    if number is None:
        number = 1
        while True:
            t0 = clock()
            for _ in range(number):
                fn()
            if clock() - t0 >= target / 4 or number >= 1 << 20:
                break
            number *= 4
        number = max(1, number)
    samples = []
    for _ in range(repeats):
        t0 = clock()
        for _ in range(number):
            fn()
        samples.append((clock() - t0) / number)
    return TimingStats(tuple(samples), number)


@dataclass(frozen=True)
class Row:
    name: str
    stats: TimingStats
    ratio: float  # median time relative to the kernel's (2.0: twice as slow as the kernel)


@dataclass
class Comparison:
    """Timings of a kernel and its baselines; the first row is the kernel."""

    rows: list[Row] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)

    def table(self) -> str:
        """A plain-text table."""
        # the name column is as wide as the longest name ('sparsescope (lattice)' pushed its row
        # 5 characters right of the header at a fixed 16)
        w = max([16, *(len(r.name) for r in self.rows)])
        head = f"{'':{w}} {'median':>10} {'min':>10} {'IQR':>10} {'vs kernel':>10}"
        lines = [head]
        for r in self.rows:
            lines.append(f"{r.name:{w}} {format_seconds(r.stats.median):>10} {format_seconds(r.stats.min):>10} "
                         f"{format_seconds(r.stats.iqr):>10} {r.ratio:>9.2f}x")
        for name, ok in self.checks.items():
            lines.append(f"check {name}: {'agrees' if ok else 'DIFFERS'}")
        return "\n".join(lines)

    __str__ = table

    def html(self) -> str:
        """An HTML table followed by the bar plot."""
        cell = "padding:2px 8px;text-align:right"
        rows = "".join(
            f"<tr><td style='padding:2px 8px'>{_html.escape(r.name)}</td>"
            f"<td style='{cell}'>{format_seconds(r.stats.median)}</td>"
            f"<td style='{cell}'>{format_seconds(r.stats.min)}</td>"
            f"<td style='{cell}'>{format_seconds(r.stats.iqr)}</td>"
            f"<td style='{cell}'>{r.ratio:.2f}x</td></tr>" for r in self.rows)
        checks = "".join(
            f"<div style='color:{AGREES if ok else DIFFERS}'>check {_html.escape(n)}: "
            f"{'agrees' if ok else 'DIFFERS'}</div>" for n, ok in self.checks.items())
        head = "".join(f"<th style='{cell}'>{h}</th>" for h in ("", "median", "min", "IQR", "vs kernel"))
        return (f"<table class='timing' style='border-collapse:collapse;font:12px sans-serif'>"
                f"<tr>{head}</tr>{rows}</table>{checks}{self.svg()}")

    def _repr_html_(self) -> str:
        return self.html()

    def svg(self, width: int = 360, bar: int = 18) -> str:
        """Horizontal bars of the median per row on a log scale, with the IQR as a whisker and
        decade ticks below; each value label sits after its bar and whisker, and the drawing
        widens to hold the longest (on a linear scale a kernel 100x faster than numpy was a bar
        1-3 px wide, and whiskers struck through the labels, which were clipped); the margin
        on the left holds the longest row name, and each decade the width its tick labels need.
        Text and whiskers take the page's text colour
        (``currentColor``), so the plot reads in a dark theme too.

        >>> import re
        >>> names = ["fused", "unfused (flatten, then matvec)"]
        >>> svg = Comparison([Row(n, TimingStats((1e-5, 2e-5, 3e-5), 1), 1.0) for n in names]).svg()
        >>> float(re.search(r'<text x="([\\d.]+)"[^>]*>unfused', svg).group(1)) >= 6.5 * len(names[1])
        True
        """
        if not self.rows:
            return "<svg width='0' height='0'></svg>"
        # (the row names, right-aligned, end at the bars: the margin holds the longest, which was
        # cut at the drawing's left edge when the margin was a fixed 110 px)
        pad, axis_h, char_w, margin = 4, 16, 6.5, 110
        label_w = max(margin, math.ceil(char_w * max(len(r.name) for r in self.rows)) + 10)
        # a decade below the fastest quartile, so the fastest bar still has length
        lo = math.floor(math.log10(min(r.stats.q1 for r in self.rows if r.stats.q1 > 0) or 1e-9)) - 1
        hi = max(lo + 1, math.ceil(math.log10(max(r.stats.q3 for r in self.rows) or 1.0)))  # a decade tick
        ticks = [(d, format_seconds(10.0 ** d).replace(".0 ", " ")) for d in range(lo, hi + 1)]
        # each decade as wide as its two labels need (9 px text) and a gap: seven decades in the
        # fixed 170 px overlapped "10 ms" and "100 ms"
        tick_w = char_w * 9 / 11
        need = max((tick_w * (len(a) + len(b)) / 2 + 6 for (_, a), (_, b) in zip(ticks, ticks[1:])), default=0.0)
        plot_w = max(width - margin - 80, math.ceil(need * (hi - lo)))

        def x(t: float) -> float:
            return label_w + plot_w * (math.log10(max(t, 10.0 ** lo)) - lo) / (hi - lo)

        labels = [f"{format_seconds(r.stats.median)} ({r.ratio:.2f}x)" for r in self.rows]
        ends = [max(x(r.stats.median), x(r.stats.q3)) + 5 for r in self.rows]
        full_w = int(max(width + label_w - margin, *(e + char_w * len(t) + 4 for e, t in zip(ends, labels))))
        h = len(self.rows) * (bar + pad) + pad + axis_h
        parts = [f'<svg class="timing-plot" width="{full_w}" height="{h}" viewBox="0 0 {full_w} {h}" role="img" '
                 f'font-family="sans-serif" font-size="11" fill="currentColor">']
        for k, r in enumerate(self.rows):
            y = pad + k * (bar + pad)
            w = x(r.stats.median) - label_w
            color = "#4c78a8" if k == 0 else "#9ecae9"
            parts.append(f'<text x="{label_w - 6}" y="{y + bar * 0.7:.1f}" text-anchor="end">'
                         f"{_html.escape(r.name)}</text>")
            parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar}" fill="{color}">'
                         f"<title>{_html.escape(str(r.stats))}</title></rect>")
            parts.append(f'<line class="iqr" x1="{x(r.stats.q1):.1f}" x2="{x(r.stats.q3):.1f}" y1="{y + bar / 2}" '
                         f'y2="{y + bar / 2}" stroke="currentColor" stroke-width="1.5"/>')
            parts.append(f'<text class="value" x="{ends[k]:.1f}" y="{y + bar * 0.7:.1f}">'
                         f"{_html.escape(labels[k])}</text>")
        y_axis = h - axis_h
        parts.append(f'<line x1="{label_w}" x2="{label_w + plot_w}" y1="{y_axis}" y2="{y_axis}" '
                     f'stroke="currentColor" stroke-width="0.5"/>')
        for d, tick in ticks:
            tx = x(10.0 ** d)
            parts.append(f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{y_axis}" y2="{y_axis + 3}" stroke="currentColor"/>'
                         f'<text class="tick" x="{tx:.1f}" y="{y_axis + 13}" text-anchor="middle" font-size="9">'
                         f"{tick}</text>")
        parts.append("</svg>")
        return "".join(parts)


def compare(kernel_call: Callable[[], Any], baselines: Mapping[str, Callable[[], Any]] | None = None,
            repeats: int = 7, number: int | None = None, name: str = "kernel",
            check: Callable[[Any, Any], bool] | None = None) -> Comparison:
    """Time ``kernel_call`` and each baseline; ratios are baseline median / kernel median.

    With ``check(kernel_result, baseline_result) -> bool`` each baseline's result is compared
    with the kernel's (recorded in :attr:`Comparison.checks`).
    """
    kstats = time_callable(kernel_call, repeats, number)
    rows = [Row(name, kstats, 1.0)]
    checks = {}
    kresult = kernel_call() if check is not None else None
    for bname, fn in (baselines or {}).items():
        st = time_callable(fn, repeats, number)
        rows.append(Row(bname, st, st.median / kstats.median if kstats.median else float("inf")))
        if check is not None:
            checks[bname] = bool(check(kresult, fn()))
    return Comparison(rows, checks)
