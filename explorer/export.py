"""Export a whole trace to one self-contained HTML page that works offline.

The page holds one ``<section class="step">`` per step (inline CSS, inline SVG drawings, inline
highlighted code) and a few lines of inline JavaScript that show one step at a time with
previous/next buttons and the arrow keys. Without JavaScript every step is shown in order, with no
C beside it: the kernel's C is written once and the script copies it into each step
(:mod:`explorer.sharedc`).
Nothing in it refers to anything outside the page. With provenance (``data["provenance"]`` of
the C artifact: ``{tag: C lines}``) the drawings' nodes and the C lines of a tag share a colour on
every step, and so do the parts of the program they came from (accesses, loops, lattice
points, looplets); a row of buttons selects one tag (the others fade), and so does clicking a
coloured part: a program access, a drawing node or a C line. Hovering or clicking a part also
outlines every part of its tag on that step, and a click scrolls the step's C to the tag's
first line (:mod:`explorer.linking`); tooltips say what a tag stands for.

>>> from compiler import Trace
>>> t = Trace(); _ = t.record("parse", after="y[i] = A[i]")
>>> page = export_html(t)
>>> page.count('<section class="step"'), "http://" in page or "https://" in page
(1, False)
"""

from __future__ import annotations

import html as _html
import json
import os
import re

from .linking import LINK_SCRIPT
from .palette import view_colors_attr
from .renderers import kernel_c_parts, render_step
from .sharedc import FILL_SCRIPT, SharedC
from .session import Session, explore
from .zoom import ZOOM_FUNCTION

__all__ = ["export_html", "export_text", "external_urls"]

_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif; margin: 0;
       color: #222; background: #fff; }
header { position: sticky; top: 0; background: #f4f6f8; border-bottom: 1px solid #dde;
         padding: 8px 14px; display: flex; gap: 10px; align-items: center; z-index: 1; }
header h1 { font-size: 16px; margin: 0 12px 0 0; }
header button { font-size: 13px; padding: 3px 10px; }
nav.steps { display: flex; flex-wrap: wrap; gap: 4px; padding: 6px 14px; border-bottom: 1px solid #eee; }
nav.steps a { font: 12px monospace; padding: 1px 6px; border-radius: 3px; background: #eef;
              color: #224; text-decoration: none; }
nav.steps a.failed { background: #fbb; }
nav.steps a.current { background: #36c; color: #fff; }
main { padding: 8px 14px; }
section.step { border-top: 1px solid #eee; padding: 6px 0 14px; }
.js section.step { display: none; }
.js section.step.current { display: block; }
.error-summary { background: #fde8e8; color: #8a1111; padding: 6px 14px; }
svg { max-width: 100%; height: auto; }
/* the tag legend: a side panel beside the steps that stays in view as the page scrolls (sticky
   below the header, scrolling on its own when taller than the window); a column of its own, so it
   never lies over the code or the drawings (a narrow window puts it above the steps, as before) */
div.page.legend { display: grid; grid-template-columns: minmax(0, 1fr) 13rem; align-items: start; }
nav.provenance { display: flex; flex-direction: column; align-items: stretch; gap: 4px; padding: 6px 10px;
                 border-left: 1px solid #eee; font: 12px sans-serif; position: sticky; top: var(--ss-head, 48px);
                 max-height: calc(100vh - var(--ss-head, 48px)); overflow-y: auto; box-sizing: border-box; }
nav.provenance button { font: 12px monospace; border: 1px solid #ccc; border-radius: 3px; padding: 1px 6px;
                        cursor: pointer; text-align: left; overflow-wrap: anywhere; }
@media (max-width: 760px) {
  div.page.legend { display: flex; flex-direction: column; align-items: stretch; }
  nav.provenance { order: -1; position: static; max-height: none; flex-flow: row wrap; align-items: center;
                   border-left: 0; border-bottom: 1px solid #eee; }
}
nav.provenance button.selected { outline: 2px solid #36c; }
.selecting span.ln[data-tags]:not(.sel), .selecting span.pv[data-tags]:not(.sel) { background: transparent !important; }
.selecting g.node[data-tags]:not(.sel) { opacity: .3; }
[data-tags] { cursor: pointer; }
/* a dark preference (the system's): JupyterLab's dark theme's colours, which the renderers'
   var(--jp-...) take, so code, drawings and tables read as in JupyterLab's dark theme */
@media (prefers-color-scheme: dark) {
  :root { color-scheme: dark; --jp-layout-color0: #111111; --jp-content-font-color1: #ffffff;
          --jp-content-font-color2: rgba(255, 255, 255, .7); --jp-content-font-color3: rgba(255, 255, 255, .5);
          --jp-border-color2: #424242; --jp-mirror-editor-keyword-color: #4caf50;
          --jp-mirror-editor-string-color: #ff7070; --jp-mirror-editor-property-color: #42a5f5;
          --jp-mirror-editor-operator-color: #d48fff; --jp-mirror-editor-number-color: #66bb6a; }
  body { color: #ffffff; background: #111111; }
  header { background: #212121; border-bottom-color: #424242; }
  nav.steps, nav.provenance, section.step { border-color: #333333; }
  nav.steps a { background: #2b2b3d; color: #e0e0f0; }
  nav.steps a.failed { background: #7a1f1f; color: #ffffff; }
  .error-summary { background: #4a1515; color: #ffd6d6; }
  nav.provenance button { border-color: #616161; }
}
"""

_JS = """
(function () {
  document.documentElement.className += ' js';
  ssFillC(document);   // (each step's C, from the one the page holds: explorer.sharedc)
  var steps = Array.prototype.slice.call(document.querySelectorAll('section.step'));
  var links = Array.prototype.slice.call(document.querySelectorAll('nav.steps a'));
  var pos = document.getElementById('position');
  var cur = 0;
  function show(i) {
    if (!steps.length) return;
    cur = Math.max(0, Math.min(steps.length - 1, i));
    steps.forEach(function (s, k) { s.classList.toggle('current', k === cur); });
    links.forEach(function (a, k) { a.classList.toggle('current', k === cur); });
    pos.textContent = 'step ' + cur + ' of ' + (steps.length - 1);
    if (history.replaceState) history.replaceState(null, '', '#step-' + cur);
    ssZoomAll(steps[cur]);   // the step's drawings at the zoom levels chosen for their kinds
    showColors(steps[cur]);
    // its C panes, shown the first time, open at the step's first linked line (not the #includes)
    Array.prototype.forEach.call(steps[cur].querySelectorAll('[data-ss-open]'), function (p) {
      if (p.ssOpened) return;
      p.ssOpened = true;
      var line = p.querySelector('span.ln[data-line="' + p.getAttribute('data-ss-open') + '"]');
      if (line) ssScroll(line, p);
    });
  }
  document.getElementById('prev').onclick = function () { show(cur - 1); };
  document.getElementById('next').onclick = function () { show(cur + 1); };
  links.forEach(function (a, k) { a.onclick = function (e) { e.preventDefault(); show(k); }; });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'ArrowRight' || e.key === 'j') show(cur + 1);
    else if (e.key === 'ArrowLeft' || e.key === 'k') show(cur - 1);
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(steps.length - 1);
  });
  var tagButtons = Array.prototype.slice.call(document.querySelectorAll('nav.provenance button'));
  var selected = '';
  // each step gives its tags their colours (its data-colors); the buttons show the current step's
  function colorsOf(el) {
    var s = el && el.closest('section.step');
    return s && s.hasAttribute('data-colors') ? JSON.parse(s.getAttribute('data-colors')) : {};
  }
  function showColors(section) {
    var colors = colorsOf(section);
    tagButtons.forEach(function (b) {
      if (!b.dataset.tag) return;
      var c = colors[b.dataset.tag];
      b.style.background = c || 'transparent';
      b.style.color = c ? '#000000' : '';   // (black on a tag's colour; the page's text elsewhere)
      b.style.borderStyle = c ? 'solid' : 'dashed';
      b.title = b.getAttribute('data-lines') + (c ? '' : ' (nothing of this step)');
    });
  }
  function paint(el, color) {
    // a selected part shows the selected tag's colour (it may have been drawn in another's)
    var shape = el.tagName.toLowerCase() === 'g' ? el.querySelector('polygon, ellipse, path, rect') : el;
    if (!shape) return;
    var attr = shape === el ? 'background' : 'fill';
    if (!shape.hasAttribute('data-own')) shape.setAttribute('data-own', attr === 'fill' ?
        shape.getAttribute('fill') || '' : shape.style.background);
    var own = shape.getAttribute('data-own');
    if (attr === 'fill') shape.setAttribute('fill', color || own); else shape.style.background = color || own;
  }
  // tag: one tag, or several (a C line's drawn nodes) separated by spaces, or '' (all)
  function selectTag(tag) {
    selected = tag || '';
    var group = selected ? selected.split(' ') : [];
    document.documentElement.classList.toggle('selecting', !!tag);
    tagButtons.forEach(function (b) { b.classList.toggle('selected', group.indexOf(b.dataset.tag) >= 0); });
    Array.prototype.forEach.call(document.querySelectorAll('[data-tags]'), function (el) {
      var own = el.getAttribute('data-tags').split(' ');
      var hit = group.filter(function (t) { return own.indexOf(t) >= 0; })[0];
      el.classList.toggle('sel', !!hit);
      paint(el, hit ? colorsOf(el)[hit] : '');
    });
  }
  tagButtons.forEach(function (b) { b.onclick = function () { selectTag(b.dataset.tag); }; });
  // clicking a coloured part (program, drawing node, C line) selects its tag (a C line: every
  // tag of it the step's drawings name, together); clicking again goes on to its tags one by
  // one, and after the last one back to all
  document.addEventListener('click', function (e) {
    if (e.target.closest('nav')) return;
    var el = e.target.closest('[data-tags]');
    if (!el) return;
    var tags = el.getAttribute('data-tags').split(' ');
    // (first what the click links: of a C line, every tag the step draws)
    var first = ssDrawn(el, el.closest('section.step') || document).join(' ');
    var choices = [first].concat(tags.filter(function (t) { return t !== first; }));
    var k = choices.indexOf(selected);
    selectTag(k < 0 ? choices[0] : (choices[k + 1] || ''));
  });
  var m = /^#step-(\\d+)$/.exec(location.hash);
  show(m ? parseInt(m[1], 10) : START);
  // opened at a step's link (#step-4): the step's title below the sticky header, not under it
  // (and so on a reload: the browser's restored scroll position came later, and took it away)
  if ('scrollRestoration' in history) history.scrollRestoration = 'manual';
  var head = document.querySelector('header');
  steps.forEach(function (s) { s.style.scrollMarginTop = (head.offsetHeight + 8) + 'px'; });
  // (the tag legend sticks just below the header, whatever its height)
  document.documentElement.style.setProperty('--ss-head', head.offsetHeight + 'px');
  if (m && steps.length) steps[cur].scrollIntoView();
  // a step's address typed or pasted into the open page (#step-7) shows that step too
  window.addEventListener('hashchange', function () {
    var h = /^#step-(\\d+)$/.exec(location.hash);
    if (h && steps.length) { show(parseInt(h[1], 10)); steps[cur].scrollIntoView(); }
  });
})();
"""

# (a data: URI is the page's own: the empty image whose onerror runs a view's script, explorer.fit.root_in_view)
_URL = re.compile(r"""(?:https?:)?//[\w.-]+\.\w+|(?:src|href)\s*=\s*["'](?!#|data:,)""", re.I)


def external_urls(page: str) -> list[str]:
    """Anything in ``page`` that looks like a reference to something outside it.

    >>> external_urls('<a href="#step-1">x</a>'), external_urls('<img src="http://x.org/a.png">')
    ([], ['src="', 'http://x.org'])
    >>> external_urls('<img src="data:," onerror="">')
    []
    """
    return _URL.findall(page)


#: a code line's or a coloured part's tooltip (explorer.renderers.render_code), in the tag that opens it
_TIP = re.compile(r'(<span class="(?:ln|pv)\b[^"]*"[^>]*?) title="([^"]*)"')
#: a highlighted token (its only attribute its style) and a line's number: the styles a page repeats most
_STYLED = re.compile(r'<span (class="lno" )?style="([^"]*)">')


def shared_attributes(body: str, tips: dict | None = None) -> tuple[str, str, str]:
    """``body`` with its most repeated attributes shared: each code line's and coloured part's tooltip an index into
    one table, set by a script the first time the pointer is over it; each token's and line number's style a class.
    Each step shows the kernel's C, and its lines' tooltips and styles were repeated in every step: 10 MB of a 3-D
    CSF product's page of 19 MB. ``(body, CSS, script)``.

    >>> body, css, script = shared_attributes('<span class="ln" title="a &amp; b"><span style="color:red">x</span>'
    ...                                       '</span><span class="ln" title="a &amp; b">y</span>')
    >>> body
    '<span class="ln" data-tip="0"><span class="ss-s0">x</span></span><span class="ln" data-tip="0">y</span>'
    >>> css, script.startswith('var SS_TIPS = ["a & b"];')
    ('.ss-s0 { color:red }', True)

    ``tips``: the table's first entries, text to index (those of the C the steps share, :mod:`explorer.sharedc`).
    """
    tips = {} if tips is None else tips
    styles: dict[str, int] = {}

    def tip(m: re.Match) -> str:
        return f'{m.group(1)} data-tip="{tips.setdefault(m.group(2), len(tips))}"'

    def styled(m: re.Match) -> str:
        k = styles.setdefault(m.group(2), len(styles))
        return f'<span class="lno ss-s{k}">' if m.group(1) else f'<span class="ss-s{k}">'

    body = _STYLED.sub(styled, _TIP.sub(tip, body))
    css = "\n".join(f".ss-s{k} {{ {_html.unescape(style)} }}" for style, k in styles.items())
    table = json.dumps([_html.unescape(t) for t in tips]).replace("</", "<\\/")
    script = (f"var SS_TIPS = {table};\n"
              "document.addEventListener('mouseover', function (e) {\n"
              "  var el = e.target.closest && e.target.closest('[data-tip]');\n"
              "  if (el && !el.hasAttribute('title'))\n"
              "    el.setAttribute('title', SS_TIPS[+el.getAttribute('data-tip')]);\n"
              "});")
    return body, css, script


def export_html(source, path: str | os.PathLike | None = None, title: str | None = None) -> str:
    """The HTML page for a trace or session (anything :func:`~explorer.explore` accepts);
    also written to ``path`` when given. The page opens at the failing step, if any."""
    session: Session = explore(source)
    title = title or (f"sparsescope trace: {session.name}" if session.name else "sparsescope trace")
    sections, links = [], []
    shared = SharedC()   # (the kernel's C written once, each step's copy painted by the page's script)
    # provenance of the whole trace (the C's tags), so earlier programs and drawings share the C's colours
    prov = session.provenance()
    for i, step in enumerate(session.steps):
        failed = step.error is not None
        # each step a view: its tags (drawings, program, its C and the C beside it) distinct colours
        view = prov.for_view()
        body = render_step(session.step(i), provenance=view) + shared.pane(kernel_c_parts(session, i, view))
        sections.append(f'<section class="step" id="step-{i}" data-index="{i}"{view_colors_attr(view)}>'
                        f"{body}</section>")
        cls = ' class="failed"' if failed else ""
        links.append(f'<a href="#step-{i}"{cls}>'
                     f"{i}&nbsp;{_html.escape(step.stage)}</a>")
    steps, shared_css, tips = shared_attributes("".join(sections), shared.tips)
    start = session.failed_index if session.failed_index is not None else 0
    error = (f'<div class="error-summary">lowering failed at step {start}: {_html.escape(session.error)}</div>'
             if session.error else "")
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_html.escape(title)}</title><style>{_CSS}\n{shared_css}\n{shared.css()}</style></head><body>"
        f'<header><h1>{_html.escape(title)}</h1><button id="prev" title="previous step (left arrow)">'
        f'&larr; prev</button><button id="next" title="next step (right arrow)">next &rarr;</button>'
        f'<span id="position">{len(session.steps)} steps</span></header>'
        f'<div class="page{" legend" if prov else ""}"><div class="column">{error}'
        f'<nav class="steps">{"".join(links)}</nav><main>{steps}</main></div>{_legend(prov)}</div>'
        f"{shared.templates()}"
        f"<script>{ZOOM_FUNCTION}\n{FILL_SCRIPT}\n{_JS.replace('START', str(start))}\n{LINK_SCRIPT}\n{tips}"
        "</script></body></html>\n")
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page


def _legend(prov: dict) -> str:
    """Buttons selecting one provenance tag (its C lines and drawing nodes), and "all"; the page
    colours each as the step shown colours its tag."""
    if not prov:
        return ""
    # (coloured by the step shown: a tag's colour is its step's, explorer.palette)
    buttons = "".join(f'<button data-tag="{_html.escape(t)}" data-lines="C lines {", ".join(map(str, lines))}" '
                      f'style="background:transparent" title="C lines {", ".join(map(str, lines))}">'
                      f'{_html.escape(t)}</button>' for t, lines in prov.items())
    return f'<nav class="provenance"><span>provenance:</span><button data-tag="">all</button>{buttons}</nav>'


def export_text(source) -> str:
    """Every step of a trace or session as plain text: stage, note, error, program, rewrites,
    and each artifact's text.

    >>> from compiler import Trace
    >>> t = Trace(); _ = t.record("parse", after="y[i] = A[i]", note="ok")
    >>> print(export_text(t))
    == step 0: parse -- ok
    y[i] = A[i]
    """
    session: Session = explore(source)
    out = []
    for i, step in enumerate(session.steps):
        note = step.note.splitlines()[0] if step.note and step.error is None else ""
        out.append(f"== step {i}: {step.stage}" + (f" -- {note}" if note else ""))
        if step.error is not None:
            out.append(f"!! {step.error}")
        program = session.program_text(i)
        if program and (i == 0 or program != session.program_text(i - 1)):
            out.append(program)
        for r in step.rewrites:
            out.append(f"  [{r.rule}] {r.before}  ->  {r.after}")
        for a in step.artifacts:
            if a.kind == "c" and a.text == program:
                continue
            out.append(f"-- {a.kind}: {a.name}")
            out.append(a.text)
    return "\n".join(out)
