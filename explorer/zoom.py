"""Zoom levels for the drawings: zoom out, zoom in, fit and 100%, with the level shown.

Each drawing's title holds the controls (:func:`zoom_controls`): ``−`` and ``+`` step through
:data:`ZOOM_LEVELS` (25% to 400%) from the level shown, *fit* scales the drawing down to its
pane's width (never up), *100%* shows it at its own size. A drawing larger than its pane
scrolls inside it (its ``.drawing`` box), one smaller is centred (:func:`~explorer.fit.fit_svg`
makes it a centred block). Until a level is chosen, a drawing is as :func:`~explorer.fit.fit_svg`
draws it: fitted, but not below half its size (three quarters for a program's tree laid out left
to right).

The chosen level is kept per kind of drawing (a lattice, a looplet nest, the CFIR, ...) on the
view that shows it (the explorer, a Compare column, else the page), so stepping to the next
lowering step shows the next lattice at the level the last one was given: the explorer's drawing
pane holds :func:`zoom_restore`, which applies it once the pane is shown, and the exported page
applies it to the step it shows. The code is plain JavaScript, defined on ``window`` by the first
control used (a notebook runs no ``<script>`` put into a widget).

>>> html = zoom_controls()
>>> all(f'class="ss-zoom-{k}"' in html for k in ("out", "in", "fit", "100", "level"))
True
"""

from __future__ import annotations

import html as _html
import json

__all__ = ["ZOOM_FUNCTION", "ZOOM_LEVELS", "zoom_controls", "zoom_restore"]

#: The zoom levels, in percent, that ``−`` and ``+`` step through.
ZOOM_LEVELS = (25, 33, 50, 67, 75, 90, 100, 110, 125, 150, 175, 200, 250, 300, 400)

# ssZoom(el, action): el is a control (or anything inside an .artifact, or the .artifact);
# action is 'in', 'out', 'fit', '100' or 'restore' (apply the view's stored level, if any, and
# show the level). A drawing's own size is its svg's width attribute (Graphviz: pt, 4/3 px).
ZOOM_FUNCTION = r"""function ssZoom(el, action) {
  var art = el.closest ? el.closest('.artifact') : null;
  var d = art && art.querySelector('.drawing');
  var svg = d && d.querySelector('svg');
  if (!svg) return;
  var view = el.closest('.ss-pick-root, .ss-column') || document.documentElement;
  var store = view.ssZoom || (view.ssZoom = {});
  var key = d.getAttribute('data-zoom-key') || '';
  var w = svg.getAttribute('width') || '', own = parseFloat(w) * (/px$/.test(w) ? 1 : 4 / 3);
  var shown = svg.getBoundingClientRect().width;
  var now = typeof store[key] === 'number' ? store[key] : (shown && own ? shown / own : 1);
  var levels = [""" + ", ".join(str(z / 100) for z in ZOOM_LEVELS) + r"""];
  var z = action === 'restore' ? store[key] : action === 'fit' ? 'fit' : action === '100' ? 1 : null;
  if (action === 'in') z = levels.filter(function (l) { return l > now * 1.001; })[0] || levels[levels.length - 1];
  if (action === 'out') z = levels.filter(function (l) { return l < now * 0.999; }).pop() || levels[0];
  if (z === 'fit') { svg.style.width = ''; svg.style.maxWidth = '100%'; svg.style.minWidth = '0'; }
  else if (typeof z === 'number' && own) {
    svg.style.width = (own * z) + 'px'; svg.style.maxWidth = 'none'; svg.style.minWidth = '0';
  }
  svg.style.height = 'auto';
  if (action !== 'restore') store[key] = z;
  var out = art.querySelector('.ss-zoom-level');
  shown = svg.getBoundingClientRect().width;
  if (out) out.textContent = shown && own ? Math.round(shown / own * 100) + '%'
                                          : (typeof z === 'number' ? Math.round(z * 100) + '%' : 'fit');
}
function ssZoomAll(root) {
  var arts = root.querySelectorAll('.artifact');
  for (var k = 0; k < arts.length; k++) if (arts[k].querySelector('.drawing svg')) ssZoom(arts[k], 'restore');
}"""


def _minify(js: str) -> str:
    return " ".join(x.strip() for x in js.splitlines())


_DEFINE = f"if(!window.ssZoom){{window.eval({json.dumps(_minify(ZOOM_FUNCTION))});}}"
_BUTTON = "font:11px sans-serif;margin-left:2px;padding:0 5px;cursor:pointer;min-width:22px"


def zoom_controls() -> str:
    """The zoom controls of a drawing's title: ``−``, the level (``fit`` until one is chosen),
    ``+``, *fit* and *100%*.

    >>> zoom_controls().count("<button")
    4
    """
    def button(cls: str, text: str, action: str, title: str) -> str:
        js = _DEFINE + f"ssZoom(this,'{action}');event.stopPropagation();"
        return (f'<button class="ss-zoom-{cls}" type="button" title="{title}" style="{_BUTTON}" '
                f'onclick="{_html.escape(js)}">{text}</button>')

    return ('<span class="ss-zoom" style="margin-left:8px;white-space:nowrap;font-weight:normal">'
            + button("out", "−", "out", "zoom out")
            + '<span class="ss-zoom-level" title="the zoom level" style="display:inline-block;min-width:38px;'
              'text-align:center;font:11px sans-serif">fit</span>'
            + button("in", "+", "in", "zoom in")
            + button("fit", "fit", "fit", "fit the drawing to the pane")
            + button("100", "100%", "100", "the drawing at its own size")
            + "</span>")


def zoom_restore() -> str:
    """HTML that, once a notebook pane shows it, gives the drawings beside it the zoom levels
    their view keeps and shows each level (an image that fails to load runs its ``onerror``: a
    widget runs no script).

    >>> "ssZoomAll" in zoom_restore()
    True
    """
    js = _DEFINE + "var p=this.parentElement;this.remove();if(p)ssZoomAll(p);"
    return f'<img alt="" src="data:," style="display:none" onerror="{_html.escape(js)}">'
