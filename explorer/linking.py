"""Two-way provenance in the browser, as Compiler Explorer links source and assembly.

Every coloured part the renderers draw carries ``data-tags`` (its provenance tags: a program
access or loop, a drawing node, a C line). Hovering one outlines every part of its first tag
in the same view (the C lines, the lattice point or looplet, the program's accesses), and
clicking one keeps them outlined (until the next click) and scrolls the C pane, and only it,
to the tag's first line (unless the click was in the C, which stays where it is): the clicked
part stays where it was (scrolling the page or the notebook to the line took it out of view). The code is plain JavaScript with no library, so the exported
page (:mod:`explorer.export`), the notebook's panes and a step shown as a notebook's output
(``render_step(..., linked=True)``; inline handlers: a notebook runs no ``<script>`` put into a
widget or an output) run the same function.

:func:`link_handlers` gives the inline attributes for a notebook pane; :data:`LINK_SCRIPT`
installs the same handlers on a whole page; :func:`scroll_to_tag` is HTML that, once shown,
scrolls a C pane to a tag's first line (the widget's answer to choosing a tag in its menu or
at a ``lower:*`` step).

>>> 'onmouseover="' in link_handlers() and "ssLink" in LINK_SCRIPT
True
"""

from __future__ import annotations

import html as _html
import json
import re

__all__ = ["LINE_BOX", "PART_BOX", "LINK_COLOR", "LINK_FUNCTION", "LINK_OUTLINE", "LINK_TEXT", "LINK_SCRIPT", "link_handlers",
           "mark_linked",
           "scroll_to_line", "scroll_to_tag"]

#: The stroke and fill of linked drawing nodes: its contrast is 4.9 against white and 3.8
#: against JupyterLab's dark background (#111111), so a linked node stands out in both themes,
#: not only by its outline.
LINK_COLOR = "#d81b60"
#: The outline of linked code (lines and parts): the theme's text colour, which keeps a contrast
#: of 3 or more on every provenance colour (explorer.palette: black 5.9, white 3.5) and on the
#: page in both themes; the link colour stood 1.4 off the provenance colours' mid tones.
LINK_OUTLINE = "var(--jp-content-font-color1, #1a1a1a)"
#: The labels of a linked drawing node, on :data:`LINK_COLOR` (contrast 4.9).
LINK_TEXT = "#ffffff"
#: The box of each line of code (``span.ln``): a block of its own, 1.5 px taller than the line's
#: leading above and below and 3 px wider each side, so a linked line's 2 px outline, drawn
#: inside the box, lies in that margin and the leading (about 1 px clear of its glyphs). An
#: inline line's box is its glyphs' box: an outline 1 px inside it hid the line's underscores,
#: and one outside it the next line's (``t_j`` read ``t j``).
LINE_BOX = "display:inline-block;padding:1.5px 3px"
#: The box of a marked part of a line (``span.pv``): a block of its own as tall as the line's
#: leading and 1.5 px more above and below, into the line's margin (and 2 px more each side),
#: with negative margins as large, so the line keeps its height and the text its place. A
#: linked part's outline is drawn inside it, as a line's: in its line's margin, whatever the
#: font's glyph box. An inline part's box is its glyphs' box: an outline outside it reached
#: past its line's box with taller glyph boxes, over the next line's glyphs. The colour stays
#: on the text (``content-box``).
PART_BOX = "display:inline-block;padding:1.5px 2px;margin:-1.5px -2px;background-clip:content-box"
# a linked line's or part's outline: inside its box, in its line's margin
_OUTLINE = "outline:2px solid " + LINK_OUTLINE + ";outline-offset:-2px"

# ssLink(event, root, kind, cSelector): the parts of the pinned tag are linked, and on "over"
# those of the first tag of the part under the pointer too (of a line, ssDrawn: every tag a
# drawing of the step names, as the expression tags of the array nodes it came from, B's and the
# concat's, after the line's looplets' tags: each node is outlined, not the first alone);
# "click" pins those tags (a click on nothing unpins), "out" leaves the pinned ones. Shapes of
# drawing nodes keep their own stroke and fill in data-ss-stroke and data-ss-fill (their labels'
# fill too), so unlinking restores them. ssScroll(line, pane) scrolls the box inside the C pane
# that scrolls, and nothing outside it: a pane that shows all its lines stays.
LINK_FUNCTION = r"""function ssLink(e, root, kind, cSel) {
  root = root || document;
  var holder = root.nodeType === 9 ? root.documentElement : root;
  var marked = root.querySelectorAll('.ss-linked');
  for (var k = 0; k < marked.length; k++) {
    var m = marked[k]; m.classList.remove('ss-linked');
    var s = m.tagName.toLowerCase() === 'g' ? m.querySelector('polygon, ellipse, path, rect') : null;
    if (s) { s.setAttribute('stroke', s.getAttribute('data-ss-stroke') || 'black');
             s.setAttribute('stroke-width', s.getAttribute('data-ss-width') || '1');
             if (s.hasAttribute('data-ss-fill')) s.setAttribute('fill', s.getAttribute('data-ss-fill'));
             var ts = m.querySelectorAll('text[data-ss-fill]');
             for (var j = 0; j < ts.length; j++) ts[j].setAttribute('fill', ts[j].getAttribute('data-ss-fill')); }
    else { m.style.outline = ''; }
  }
  var el = e.target.closest && e.target.closest('[data-tags]');
  var tag = el && root.contains(el) ? ssDrawn(el, root).join(' ') : '';
  if (kind === 'click') holder.setAttribute('data-ss-pinned', tag);
  var pinned = holder.getAttribute('data-ss-pinned') || '';
  var tags = (kind === 'out' || !tag || tag === pinned ? pinned : pinned + ' ' + tag).split(' ');
  for (var t = 0; t < tags.length; t++) {
    if (!tags[t]) continue;
    var parts = root.querySelectorAll(ssSel(tags[t]));
    for (var k = 0; k < parts.length; k++) {
      var p = parts[k]; p.classList.add('ss-linked');
      var s = p.tagName.toLowerCase() === 'g' ? p.querySelector('polygon, ellipse, path, rect') : null;
      if (s) {
        if (!s.hasAttribute('data-ss-stroke')) { s.setAttribute('data-ss-stroke', s.getAttribute('stroke') || 'black');
                                                 s.setAttribute('data-ss-width', s.getAttribute('stroke-width') || '1');
                                                 s.setAttribute('data-ss-fill', s.getAttribute('fill') || 'none'); }
        s.setAttribute('stroke', '""" + LINK_COLOR + r"""'); s.setAttribute('stroke-width', '4');
        s.setAttribute('fill', '""" + LINK_COLOR + r"""');
        var ts = p.querySelectorAll('text');
        for (var j = 0; j < ts.length; j++) {
          if (!ts[j].hasAttribute('data-ss-fill')) ts[j].setAttribute('data-ss-fill', ts[j].getAttribute('fill') || 'black');
          ts[j].setAttribute('fill', '""" + LINK_TEXT + r"""');
        }
      } else { p.style.outline = '2px solid """ + LINK_OUTLINE + r"""'; p.style.outlineOffset = '-2px'; }
    }
  }
  if (kind !== 'click' || !cSel || !tag) return;
  var sel = ssSel(tag.split(' ')[0]);
  var panes = root.querySelectorAll(cSel);
  for (var k = 0; k < panes.length; k++) {
    if (panes[k].contains(el)) continue;
    var line = panes[k].querySelector('span.ln' + sel);
    if (line) ssScroll(line, panes[k]);
  }
}
function ssFirst(el, root) {
  var tags = el.getAttribute('data-tags').split(' ');
  if (!el.matches('span.ln')) return tags[0];
  for (var k = 0; k < tags.length; k++) if (root.querySelector('svg g.node' + ssSel(tags[k]))) return tags[k];
  return tags[0];
}
function ssDrawn(el, root) {
  if (!el.matches('span.ln')) return [ssFirst(el, root)];
  var tags = el.getAttribute('data-tags').split(' '), drawn = [];
  for (var k = 0; k < tags.length; k++) if (root.querySelector('svg g.node' + ssSel(tags[k]))) drawn.push(tags[k]);
  return drawn.length ? drawn : [tags[0]];
}
function ssSel(tag) { return '[data-tags~="' + tag.replace(/["\\]/g, '\\$&') + '"]'; }
function ssScroll(line, pane) {
  for (var box = line.parentElement; box; box = box.parentElement) {
    var o = getComputedStyle(box).overflowY;
    if ((o === 'auto' || o === 'scroll') && box.scrollHeight > box.clientHeight + 1) {
      box.scrollTop += line.getBoundingClientRect().top - box.getBoundingClientRect().top - 8;
      return;
    }
    if (box === pane) return;
  }
}"""


def _minify(js: str) -> str:
    return " ".join(x.strip() for x in js.splitlines())


def link_handlers(c_selector: str = ".ss-c", then_click: str = "", root: str = ".ss-pick-root") -> str:
    """Inline ``onmouseover``/``onmouseout``/``onclick`` attributes linking the parts of a
    notebook view: the function is defined once on ``window`` by the first event, and the view
    is the closest ``root`` (by default ``.ss-pick-root``, an :class:`~widgets.Explorer`; each
    column of a Compare is a view of its own); ``c_selector`` finds its C pane(s);
    ``then_click`` is JavaScript the click runs next (the widget's pick).

    >>> h = link_handlers(); h.count("ssLink(event") == 3
    True
    >>> "closest(&#x27;.ss-column&#x27;)" in link_handlers(root=".ss-column")
    True
    """
    define = f"if(!window.ssLink){{window.eval({json.dumps(_minify(LINK_FUNCTION))});}}"
    out = []
    for attr, kind in (("onmouseover", "over"), ("onmouseout", "out"), ("onclick", "click")):
        call = (f"ssLink(event,this.closest('{root}')||document,'{kind}',"
                f"{json.dumps(c_selector)});")
        first = then_click if kind == "click" else ""
        out.append(f'{attr}="{_html.escape(define + call + first)}"')
    return " ".join(out)


#: A ``<script>`` body for a whole page: links the parts inside each ``section.step``; a
#: click scrolls the C sections (``[data-kind="c"]`` artifacts and the "C:" sections).
LINK_SCRIPT = LINK_FUNCTION + r"""
(function () {
  function root(e) { return e.target.closest && e.target.closest('section.step'); }
  var cSel = '.c-section, .artifact[data-kind="c"]';
  document.addEventListener('mouseover', function (e) { var r = root(e); if (r) ssLink(e, r, 'over', cSel); });
  document.addEventListener('mouseout', function (e) { var r = root(e); if (r) ssLink(e, r, 'out', cSel); });
  document.addEventListener('click', function (e) { var r = root(e); if (r) ssLink(e, r, 'click', cSel); });
})();
"""


def scroll_to_tag(tag: str, c_selector: str = ".ss-c") -> str:
    """HTML that, when a notebook pane shows it, scrolls the C pane of its view to ``tag``'s first
    line (an image that fails to load at once runs its ``onerror``: a widget runs no script).

    >>> "data-tags~=" in scroll_to_tag("lattice:j:A")
    True
    """
    return _scroll_to(f'span.ln[data-tags~="{tag}"]', c_selector)


def scroll_to_line(line: int, c_selector: str = ".ss-c", root: str = ".ss-pick-root") -> str:
    """HTML that, when a notebook pane shows it, scrolls the C pane of its view (the closest
    ``root``) to C line ``line`` (where a step's C opens:
    :func:`~explorer.stepdiff.c_opening_line`), as :func:`scroll_to_tag` does.

    >>> 'data-line=' in scroll_to_line(12)
    True
    """
    return _scroll_to(f'span.ln[data-line="{int(line)}"]', c_selector, root)


def _scroll_to(line_selector: str, c_selector: str, root: str = ".ss-pick-root") -> str:
    sel = json.dumps(line_selector)
    js = (f"if(!window.ssLink){{window.eval({json.dumps(_minify(LINK_FUNCTION))});}}"
          f"var r=this.closest({json.dumps(root)})||document;var p=r.querySelector({json.dumps(c_selector)});"
          f"var l=p&&p.querySelector({sel});if(l)ssScroll(l,p);this.remove();")
    return f'<img alt="" src="data:," style="display:none" onerror="{_html.escape(js)}">'


_TAGGED_SPAN = re.compile(r'<span ([^>]*?)data-tags="([^"]*)"([^>]*)>')
_TAGGED_NODE = re.compile(r'(<g [^>]*class="node[^"]*" data-tags="([^"]*)"[^>]*>.*?)<(ellipse|polygon|path|rect)\b([^>]*)>'
                          r'(.*?</g>)', re.S)
_TEXT_FILL = re.compile(r'<text\b([^>]*?)(?:\sfill="[^"]*")([^>]*)>|<text\b([^>]*)>')


def mark_linked(html: str, tag: str) -> str:
    """``html`` (the renderers' markup) with the parts of ``tag`` linked as a click in the
    browser links them: code parts outlined in :data:`LINK_OUTLINE`, drawing nodes stroked and filled in :data:`LINK_COLOR`
    (their labels in :data:`LINK_TEXT`). The
    notebook redraws its panes when a tag is chosen; this keeps the choice visible.

    >>> mark_linked('<span class="ln" data-tags="a b">x</span><span class="ln" data-tags="c">y</span>', "b")
    '<span class="ln" data-tags="a b" style="outline:2px solid var(--jp-content-font-color1, #1a1a1a);outline-offset:-2px">x</span><span class="ln" data-tags="c">y</span>'
    >>> mark_linked('<span class="pv" data-tags="b">A[i]</span>', "b")
    '<span class="pv" data-tags="b" style="outline:2px solid var(--jp-content-font-color1, #1a1a1a);outline-offset:-2px">A[i]</span>'
    """
    if not tag:
        return html

    def span(m: re.Match) -> str:
        before, tags, after = m.groups()
        if tag not in _html.unescape(tags).split():
            return m.group(0)
        attrs = before + f'data-tags="{tags}"' + after
        if 'style="' in attrs:
            attrs = re.sub(r'style="([^"]*?);?"', lambda s: f'style="{s.group(1)};{_OUTLINE}"', attrs, count=1)
        else:
            attrs += f' style="{_OUTLINE}"'
        return f"<span {attrs}>"

    def node(m: re.Match) -> str:
        head, tags, shape, attrs, rest = m.groups()
        if tag not in _html.unescape(tags).split():
            return m.group(0)
        attrs = re.sub(r'\s(stroke|stroke-width|fill)="[^"]*"', "", attrs)
        # its labels white on the link colour (up to the end of its first group: the shape's own)
        rest = _TEXT_FILL.sub(lambda t: f'<text{t.group(1) or ""}{t.group(2) or ""}{t.group(3) or ""} fill="{LINK_TEXT}">',
                              rest)
        return f'{head}<{shape} fill="{LINK_COLOR}" stroke="{LINK_COLOR}" stroke-width="4"{attrs}>{rest}'

    return _TAGGED_NODE.sub(node, _TAGGED_SPAN.sub(span, html))
