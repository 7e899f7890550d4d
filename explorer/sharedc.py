"""One C source shared by the steps of an exported page, each step's copy painted from a little data.

Each step of an exported page shows the kernel's C beside its drawings, its lines in the step's colours
(:func:`explorer.renderers.kernel_c`). The C is the same on every step; only the colours, tooltips, tags and
focus bars of its lines differ. Written out on each step, the C was most of a page: a looplets trace of 70
steps of a 300-line kernel was 4.5 MB, 3.6 MB of it the same C. Here each distinct C is written once, as a
``<template>`` of unstyled lines (tokens styled by CSS, :func:`~explorer.theme.token_css`), and each step's
pane holds what its view paints (:class:`~explorer.renderers.CPaint`) as runs of lines. The page's script
(:data:`FILL_SCRIPT`) copies the template into each pane and paints it when the page loads, so the page then
holds what it held before, line for line.

>>> from explorer.renderers import CPaint
>>> shared = SharedC()
>>> pane = shared.pane(("C", "int x;\\nint y;", CPaint({1: "#ffd54f"}, {1: "p0"}, {1: ["p0"]}, frozenset()), 1))
>>> 'data-ss-c="0"' in pane and "int x" not in pane, shared.tips
(True, {'p0': 0})
>>> print(shared.templates())
<template id="ss-c-0"><span class="ln" data-line="1"><span class="lno">1 </span><span class="kt">int</span> x;</span>
<span class="ln" data-line="2"><span class="lno">2 </span><span class="kt">int</span> y;</span></template>
"""

from __future__ import annotations

import html as _html
import json
import re

from .drawings import FOCUS_COLOR
from .linking import LINE_BOX
from .renderers import C_SECTION_MOST, PRE_STYLE, CPaint, code_lines, section
from .theme import LINE_NUMBER, LINE_NUMBER_ON_COLOR, TEXT_ON_COLOR, styled_classes, token_css

__all__ = ["FILL_SCRIPT", "SharedC", "painted_lines"]

#: The page's function that fills each shared C pane from its template and paints its lines (runs of
#: ``[first, last, colour, tooltip's index, tags]``; the focus bar's lines), as
#: :func:`explorer.renderers.render_code` writes them.
FILL_SCRIPT = """
function ssFillC(root) {
  Array.prototype.forEach.call(root.querySelectorAll('pre[data-ss-c]'), function (pre) {
    if (pre.ssFilled) return;
    pre.ssFilled = true;
    pre.appendChild(document.getElementById('ss-c-' + pre.getAttribute('data-ss-c')).content.cloneNode(true));
    var lines = pre.children, paint = JSON.parse(pre.getAttribute('data-ss-paint'));
    paint.runs.forEach(function (r) {
      for (var n = r[0]; n <= r[1]; n++) {
        var line = lines[n - 1];
        if (r[2]) {
          line.style.background = r[2];
          line.style.color = 'TEXT_ON_COLOR';
          line.classList.add('ss-on');
        }
        if (r[3] !== '') line.setAttribute('data-tip', r[3]);
        if (r[4]) line.setAttribute('data-tags', r[4]);
      }
    });
    paint.focus.forEach(function (n) {
      lines[n - 1].classList.add('ss-focus');
      lines[n - 1].style.boxShadow = 'inset 5px 0 0 FOCUS_COLOR';
    });
  });
}
""".replace("TEXT_ON_COLOR", TEXT_ON_COLOR).replace("FOCUS_COLOR", FOCUS_COLOR)


class SharedC:
    """The distinct C sources of a page (each a template) and the tooltips of their lines (:attr:`tips`, text to
    index: the page's one table, :func:`explorer.export.shared_attributes`)."""

    def __init__(self):
        self.texts: dict[str, int] = {}
        self.tips: dict[str, int] = {}

    def pane(self, shown: tuple | None) -> str:
        """The C section of a step (``shown``: :func:`explorer.renderers.kernel_c_parts`, or None: ``""``), its
        lines left to the page's script: which C, and what the step paints on it."""
        if shown is None:
            return ""
        title, text, paint, opens = shown
        k = self.texts.setdefault(text, len(self.texts))
        data = json.dumps({"runs": self._runs(paint), "focus": sorted(paint.focus)}, separators=(",", ":"))
        pre = (f'<pre class="code ss-c" style="{PRE_STYLE};max-height:{C_SECTION_MOST}" data-ss-c="{k}" '
               f'data-ss-paint="{_html.escape(data)}"></pre>')
        return section(title, pre, "c-section", opens)

    def _runs(self, paint: CPaint) -> list:
        """The painted lines of ``paint`` as runs of lines alike: ``[first, last, colour, tip, tags]``."""
        runs: list = []
        for n in sorted(set(paint.titles) | set(paint.tags)):
            tip = self.tips.setdefault(paint.titles[n], len(self.tips)) if n in paint.titles else ""
            look = [paint.colors.get(n, ""), tip, " ".join(paint.tags.get(n, ()))]
            if runs and runs[-1][1] == n - 1 and runs[-1][2:] == look:
                runs[-1][1] = n
            else:
                runs.append([n, n, *look])
        return runs

    def templates(self) -> str:
        """A ``<template>`` of each C source's lines, unstyled, numbered as :func:`~explorer.renderers.render_code`
        numbers them."""
        out = []
        for text, k in self.texts.items():
            lines = code_lines(text, "c")
            width = len(str(len(lines)))
            body = "\n".join(f'<span class="ln" data-line="{n}"><span class="lno">{n:>{width}} </span>'
                             f'{styled_classes(line)}</span>' for n, line in enumerate(lines, 1))
            out.append(f'<template id="ss-c-{k}">{body}</template>')
        return "".join(out)

    @staticmethod
    def css() -> str:
        """The style of the shared panes' lines, line numbers and tokens (:func:`~explorer.renderers.render_code`
        inlines the same)."""
        return (f"pre.ss-c span.ln {{ {LINE_BOX} }}\n"
                f"pre.ss-c .lno {{ color:{LINE_NUMBER};user-select:none }}\n"
                f"pre.ss-c .ss-on .lno {{ color:{LINE_NUMBER_ON_COLOR} }}\n" + token_css("pre.ss-c", "ss-on"))


_PAINT = re.compile(r'data-ss-paint="([^"]*)"')


def painted_lines(html: str) -> dict[int, tuple[str, str]]:
    """The lines the first shared C pane in ``html`` paints: ``{line: (colour or "", tags)}`` (what a test of a
    page, or a reader of its source, sees there without running its script).

    >>> from explorer.renderers import CPaint
    >>> pane = SharedC().pane(("C", "a;\\nb;", CPaint({2: "#ffd54f"}, {2: "p0"}, {2: ["p0"]}, frozenset()), 2))
    >>> painted_lines(pane)
    {2: ('#ffd54f', 'p0')}
    """
    found = _PAINT.search(html)
    if found is None:
        return {}
    runs = json.loads(_html.unescape(found.group(1)))["runs"]
    return {n: (colour, tags) for first, last, colour, _, tags in runs for n in range(first, last + 1)}
