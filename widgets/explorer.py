"""The notebook UI over an explorer session.

:class:`Explorer` shows one step at a time: a timeline (slider, previous/next, play), a filter
by stage or rewrite rule, "hide unchanged steps", and panes for the program, what the step
changed (or, for a step that translates, its input: :mod:`explorer.stepdiff`), the step's
drawings (its part highlighted) and the C code, titled with the step that emitted it. A failed lowering
opens at the failing step under an error banner. "copy as code" gives the Python that
recreates the session. With ``rebuild=callable(formats, schedule) -> Trace`` it also shows
per-level format pickers per tensor and a schedule editor
(:class:`~widgets.pickers.RebuildControls`); changing a picker, or "re-lower", rebuilds and
redraws. :meth:`Explorer.for_program` builds that callable from ``compiler.lower``.

Provenance: the parts of the program (accesses, loops, lattice points, looplets), the drawing
nodes and the C lines a lattice point or looplet produced share a colour, each step's tags
distinct ones (:mod:`explorer.palette`). Choosing a tag in the "provenance" menu, or clicking a
coloured part in any pane, shows only that tag's parts (clicking again goes on to the part's
next tag, and after its last back to all). A C line made by several nodes of the step's
drawings (an array expression's ``B`` and its concat) selects all of them first, as the
exported page outlines them.

:class:`~widgets.compare.Compare` (its own module) puts two variants side by side under one
stage slider; it shares this module's panes (:func:`pane`, :func:`titled`).

All the HTML comes from :mod:`explorer`; this module only arranges it.
"""

from __future__ import annotations

import html as _html
import time
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from compiler.lowering import loop_shapes
from compiler.trace import Trace
from explorer import renderers as R
from explorer.rebuild import initial_format, program_ndims, rebuild_for
from explorer.session import Session, explore
from explorer.shapeviews import shape_data_of
from explorer.linking import link_handlers, mark_linked, scroll_to_line, scroll_to_tag
from explorer.palette import ViewColors
from explorer.stepdiff import c_opening_line, c_view, diff_view
from explorer.theme import MUTED, TEXT_ON_COLOR
from explorer.timing import compare
from explorer.zoom import zoom_restore

from .pickers import LEVELS, FormatPicker, RebuildControls
from .saved import saved_view_note

__all__ = ["Explorer", "FormatPicker", "LEVELS", "RebuildControls", "pane", "titled"]

# Clicking a coloured part (it carries data-tags) writes its tags, whether it is in the C pane
# and the tags of it the view's drawings name (ssDrawn: of a C line, every node it came from)
# into the hidden "ss-pick" text box of the widget around it; the kernel side selects them
# (Explorer.pick_tags). Hovering and clicking also link the parts at once in the browser
# (explorer.linking), before the kernel answers.
_PICK_JS = ("var el=event.target.closest('[data-tags]');if(!el)return;"
            "var root=this.closest('.ss-pick-root');var box=root&&root.querySelector('.ss-pick input');"
            "if(!box)return;var tags=el.getAttribute('data-tags').split(' ');"
            # (first the tag the click linked: of a C line, the first one the drawing names)
            "var f=window.ssFirst?ssFirst(el,root):tags[0];"
            "tags=[f].concat(tags.filter(function(t){return t!==f;}));"
            "var drawn=window.ssDrawn?ssDrawn(el,root):[f];"
            "box.value=tags.join(' ')+'|'+(el.closest('.ss-c')?'c':'')+'|'+Date.now()+'|'+drawn.join(' ');"
            "box.dispatchEvent(new Event('input',{bubbles:true}));")


def _pickable(html: str) -> str:
    """``html`` in a box whose coloured parts link their provenance tag's parts when hovered
    and select it when clicked."""
    return (f'<div class="ss-pickable" style="cursor:default" {link_handlers(".ss-c", _PICK_JS)}>'
            f"{html}</div>")

#: A pane's frame; the border is the theme's (JupyterLab's CSS variable, light elsewhere).
PANE_BORDER = "1px solid var(--jp-border-color2, #e3e3e3)"


def pane(height: str | None = None, most: str = "460px") -> W.HTML:
    """A scrolling pane: at least 100 px tall, growing with its content up to ``most``, or
    exactly ``height``."""
    size = {"height": height} if height else {"min_height": "100px", "max_height": most}
    return W.HTML(layout=W.Layout(border=PANE_BORDER, padding="4px", overflow="auto", flex="1 1 auto",
                                  **size))


def titled(title: str, pane: W.Widget, across: bool = True) -> W.VBox:
    """``pane`` under a title. ``across``: the box shares a row's width with its neighbours
    (``flex: 1 1 0``); in a column it keeps its own height instead, because a ``1 1 0`` box in
    a column whose height comes from its content collapses to nothing (Compare was empty)."""
    layout = (W.Layout(flex="1 1 0", min_width="0") if across
              else W.Layout(flex="0 0 auto", width="100%", min_width="0"))
    return W.VBox([W.HTML(f"<b>{_html.escape(title)}</b>"), pane], layout=layout)


class Explorer(W.VBox):
    """Step through a lowering: ``Explorer(session | trace | saved trace | build(trace))``.

    Keyword arguments: ``rebuild(formats, schedule) -> Trace`` (shows a per-level format
    picker per tensor and the schedule editor; ``formats`` maps tensors to Formats),
    ``formats`` (initial ``{tensor: Format | shorthand | Tensor}``), ``ndims`` (tensor orders,
    for shorthands such as ``"dense"``), ``auto_relower`` (re-lower on every picker change;
    the schedule re-lowers on "re-lower"), ``schedule`` (initial text),
    ``run`` (a zero-argument kernel call) and ``baselines`` (``{name: call}``) for live timing,
    ``check(kernel_result, baseline_result) -> bool`` to check results while timing.
    """

    def __init__(self, source: Any, *, rebuild: Callable[[dict, str], Any] | None = None,
                 formats: Mapping[str, str] | None = None, schedule: str = "",
                 ndims: Mapping[str, int] | None = None, auto_relower: bool = True,
                 run: Callable[[], Any] | None = None, baselines: Mapping[str, Callable] | None = None,
                 check: Callable[[Any, Any], bool] | None = None):
        super().__init__()
        self.run, self.baselines, self.check = run, dict(baselines or {}), check
        self._cache: dict[tuple, dict[str, str]] = {}
        #: each step's colours, given when it is first drawn with every tag (a tag chosen keeps its colour)
        self._colors: dict[int, ViewColors] = {}
        #: the tags chosen together by a click on a C line made by several drawn nodes (else ())
        self._group: tuple[str, ...] = ()
        #: renders served from the cache and renders computed (a step is drawn once per colour choice)
        self.cache_hits = self.cache_misses = 0
        self._syncing = False
        self.redraw_times: list[float] = []
        #: whether the C pane scrolls to the chosen tag's first line (not after a click in the C)
        self._scroll_c = True

        # timeline
        self.slider = W.IntSlider(min=0, max=0, value=0, description="step", continuous_update=True,
                                  layout=W.Layout(width="420px"))
        self.prev_button = W.Button(description="◀ prev", layout=W.Layout(width="80px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="80px"))
        self.play = W.Play(min=0, max=0, interval=900, description="play")
        W.link((self.play, "value"), (self.slider, "value"))
        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.slider.observe(self._on_slider, names="value")

        # filters
        self.filter = W.Dropdown(description="show", layout=W.Layout(width="300px"))
        self.hide_unchanged = W.Checkbox(value=False, description="hide unchanged steps", indent=False)
        self.provenance = W.Dropdown(description="provenance", layout=W.Layout(width="300px"),
                                     tooltip="a lattice point or looplet: its drawing nodes and C lines")
        self.provenance_legend = W.HTML()
        self.filter.observe(self._on_filter, names="value")
        self.hide_unchanged.observe(self._on_filter, names="value")
        self.provenance.observe(self._on_provenance, names="value")

        # panes
        self.error_banner = W.HTML(layout=W.Layout(display="none"))
        self.header = W.HTML()
        self.program_pane, self.diff_pane = pane(), pane()
        self.artifact_pane, self.c_pane = pane(), pane()

        # copy as code
        self.copy_button = W.Button(description="copy as code", icon="clipboard")
        self.code = W.Textarea(layout=W.Layout(width="100%", height="90px", display="none"))
        self.copy_button.on_click(lambda _: self.copy_as_code())

        # export to a self-contained page; the note says where it went
        self.export_button = W.Button(description="export page", icon="download")
        self.export_path = W.Text(value="trace.html", description="to", layout=W.Layout(width="300px"))
        self.export_note = W.HTML()
        self.export_note.add_class("ss-export-note")
        self.export_button.on_click(lambda _: self.export())

        # clicking a coloured part selects its tag (see _PICK_JS)
        self.pick = W.Text(value="", layout=W.Layout(display="none"))
        self.pick.add_class("ss-pick")
        self.pick.observe(self._on_pick, names="value")

        # format pickers and schedule editor (shown only with a rebuild callable)
        self.controls = RebuildControls(rebuild, formats if rebuild is not None else None, schedule,
                                        ndims, auto_relower)
        self.controls.on_session(self.set_session)
        controls_rebuild = [self.controls] if rebuild is not None else []

        # timing
        self.time_button = W.Button(description="time it", icon="clock-o")
        self.timing_pane = W.HTML()
        self.time_button.on_click(lambda _: self.time_it())
        timing = [W.HBox([self.time_button]), self.timing_pane] if run is not None else []

        # stable CSS classes, so browser tests (and users' stylesheets) can find the parts
        self.add_class("sparsescope-explorer")
        self.add_class("ss-pick-root")
        for widget, cls in ((self.prev_button, "ss-prev"), (self.next_button, "ss-next"),
                            (self.header, "ss-header"), (self.program_pane, "ss-program"),
                            (self.diff_pane, "ss-diff"), (self.artifact_pane, "ss-drawing"),
                            (self.c_pane, "ss-c"), (self.error_banner, "ss-error"),
                            (self.provenance, "ss-provenance"), (self.provenance_legend, "ss-provenance-legend")):
            widget.add_class(cls)
        timeline = W.HBox([self.play, self.prev_button, self.slider, self.next_button])
        filters = W.HBox([self.filter, self.hide_unchanged, self.provenance, self.provenance_legend])
        diff_box, c_box = titled("diff", self.diff_pane), titled("C", self.c_pane)
        # the diff and C panes say what they show, per step (explorer.stepdiff)
        self.diff_title, self.c_title = diff_box.children[0], c_box.children[0]
        self.diff_title.add_class("ss-diff-title")
        self.c_title.add_class("ss-c-title")
        panes = W.VBox([
            W.HBox([titled("program", self.program_pane), diff_box]),
            W.HBox([titled("drawing", self.artifact_pane), c_box]),
        ])
        self.children = [saved_view_note(), *controls_rebuild, self.error_banner, timeline, filters, self.header, panes,
                         *timing, W.HBox([self.copy_button, self.export_button, self.export_path, self.export_note]),
                         self.code, self.pick]
        self.set_session(explore(source))

    # --- session -----------------------------------------------------------------------------
    def set_session(self, session: Session) -> None:
        """Show ``session`` (after a rebuild). A failed lowering opens at the failure; else,
        after a re-lowering, the view keeps its place: the step of the same stage family (the
        second ``lattice`` step stays the second one), the filter and the provenance choice
        where the new trace still has them. A first session opens at step 0, unfiltered."""
        old = getattr(self, "session", None)
        place = _place(old) if old is not None and len(old) else None
        kept_filter = (self.filter.value or "") if place else ""
        kept_tag = (self.provenance.value or "") if place else ""
        self.session = session
        self._cache.clear()
        self._colors.clear()
        self._group = ()
        self._syncing = True
        try:
            options = [("all steps", "")]
            options += [(f"stage {f}", f"stage:{f}") for f in session.stage_families()]
            options += [(f"stage {s}", f"stage:{s}") for s in session.stage_names() if ":" in s]
            options += [(f"rule {r}", f"rule:{r}") for r in session.rules()]
            self.filter.options = options
            kept_filter = kept_filter if kept_filter in [v for _, v in options] else ""
            self.filter.value = kept_filter
            kind, _, name = kept_filter.partition(":")
            session.filter(stage=(name,) if kind == "stage" else (), rule=(name,) if kind == "rule" else (),
                           hide_unchanged=bool(place) and self.hide_unchanged.value)
            self.hide_unchanged.value = session.hide_unchanged
            prov = session.provenance()
            self.provenance.options = [("all", "")] + [(_tag_label(k, prov), k) for k in prov]
            self.provenance.value = kept_tag if kept_tag in prov else ""
            self.provenance.layout.display = "" if prov else "none"
            self._provenance = prov
            self._show_legend()
        finally:
            self._syncing = False
        if session.error:
            where = session.failed_index
            self.error_banner.value = R.error_banner(f"lowering failed at step {where} "
                                                f"({session.steps[where].stage}): {session.error}")
            self.error_banner.layout.display = ""
        else:
            self.error_banner.value = ""
            self.error_banner.layout.display = "none"
            if place is not None:
                session.current = _find_place(session, place)
        self._sync_timeline()
        self.redraw()

    @property
    def visible(self) -> list[int]:
        return self.session.visible

    def _sync_timeline(self) -> None:
        vis = self.session.visible
        self._syncing = True
        try:
            top = max(0, len(vis) - 1)
            self.slider.max = self.play.max = top
            pos = vis.index(self.session.current) if self.session.current in vis else 0
            self.slider.value = pos
        finally:
            self._syncing = False

    # --- navigation --------------------------------------------------------------------------
    @property
    def index(self) -> int:
        """The index (into all steps) of the step shown."""
        return self.session.current

    def goto(self, i: int) -> None:
        """Show step ``i`` (an index into all steps; it must pass the filters)."""
        vis = self.session.visible
        if i not in vis:
            raise ValueError(f"step {i} is hidden by the filters")
        self.slider.value = vis.index(i)

    def next(self) -> None:
        self.slider.value = min(self.slider.value + 1, self.slider.max)

    def prev(self) -> None:
        self.slider.value = max(self.slider.value - 1, 0)

    def _on_slider(self, change) -> None:
        if self._syncing:
            return
        vis = self.session.visible
        if vis:
            self.session.current = vis[min(change["new"], len(vis) - 1)]
        self.redraw()

    def _on_filter(self, _change) -> None:
        if self._syncing:
            return
        value = self.filter.value or ""
        kind, _, name = value.partition(":")
        self.session.filter(stage=(name,) if kind == "stage" else (),
                            rule=(name,) if kind == "rule" else (),
                            hide_unchanged=self.hide_unchanged.value)
        self._sync_timeline()
        self.redraw()

    # --- provenance -----------------------------------------------------------------------------
    def select_tag(self, tag: str | None) -> None:
        """Colour only ``tag``'s C lines and drawing nodes (``None`` or ``""``: every tag)."""
        self.select_tags([tag] if tag else [])

    def select_tags(self, tags: Sequence[str]) -> None:
        """Colour only the C lines and drawing nodes of ``tags`` (none: every tag); the menu shows
        the first."""
        tags = tuple(dict.fromkeys(t for t in tags if t))
        group = tags if len(tags) > 1 else ()
        if group == self._group and (tags[0] if tags else "") == (self.provenance.value or ""):
            return
        self._group = group
        if (self.provenance.value or "") == (tags[0] if tags else ""):
            self._on_provenance(None)   # (the menu's value is the same: redraw for the group)
        else:
            self.provenance.value = tags[0] if tags else ""

    @property
    def selected_tags(self) -> tuple[str, ...]:
        """The tags whose parts are shown (none: every tag's)."""
        return self._group or ((self.provenance.value,) if self.provenance.value else ())

    def pick_tags(self, tags: Sequence[str], drawn: Sequence[str] = ()) -> tuple[str, ...]:
        """What clicking a coloured part with ``tags`` does, as on the exported page: select the
        tags of it the step's drawings name (``drawn``; of a C line every node it came from, the
        browser's ``ssDrawn``) together when there are several, else its first tag; clicking
        again goes on to its tags one by one, and after the last to every tag. Returns the choice.

        Tags the trace does not know are ignored (nothing changes when none is known).
        """
        known = [t for t in tags if t in self._provenance]
        together = tuple(t for t in drawn if t in known)
        choices = ([together] if len(together) > 1 else []) + [(t,) for t in known]
        current = self.selected_tags
        if not choices:
            return current
        if current in choices:
            k = choices.index(current)
            choice = choices[k + 1] if k + 1 < len(choices) else ()
        else:
            choice = choices[0]
        self.select_tags(choice)
        return choice

    def _on_pick(self, change) -> None:
        value = change["new"] or ""
        if value:
            parts = value.split("|")   # tags|origin|time|drawn (tags|time from older pages)
            tags, origin = parts[0], parts[1] if len(parts) > 2 else ""
            drawn = parts[3].split() if len(parts) > 3 else []
            # a click in the C leaves the C where it is; anywhere else the C scrolls to the tag
            self._scroll_c = origin != "c"
            try:
                self.pick_tags(tags.split(), drawn)
            finally:
                self._scroll_c = True

    def _on_provenance(self, change) -> None:
        if self._syncing:
            return
        if change is not None and self._group and change["new"] != self._group[0]:
            self._group = ()   # (another tag chosen in the menu)
        self.redraw()

    def _show_legend(self) -> None:
        tag = self.provenance.value or ""
        prov = getattr(self, "_provenance", {})
        if not tag or tag not in prov:
            self.provenance_legend.value = ""
            return
        lines = prov[tag]
        # (in the colour the step shown gives it)
        colors = self._colors.get(self.session.current)
        color = colors.color(tag) if colors is not None else R.color_for(tag)
        others = "".join(f" + {_html.escape(t)}" for t in self._group[1:])
        self.provenance_legend.value = (
            f"<span style='background:{color};color:{TEXT_ON_COLOR};padding:1px 6px;border-radius:3px;"
            f"font:12px monospace'>{_html.escape(tag)}</span>{others} <span style='font-size:12px;color:{MUTED}'>"
            f"C lines {_html.escape(_ranges(lines))}; drawing nodes named "
            f"{_html.escape(' or '.join(R.tag_names(tag, prov.info.get(tag))))}{_html.escape(_tag_where(prov.info.get(tag)))}"
            f"</span>")

    # --- drawing ------------------------------------------------------------------------------
    def step_colors(self, i: int) -> dict[str, str]:
        """``{tag: colour}`` as step ``i`` shows its tags (each step gives them distinct colours,
        its drawings' nodes first: :mod:`explorer.palette`)."""
        self._panes(i, (), self._scroll_c)
        return dict(self._colors[i].assigned)

    def render(self, i: int) -> dict[str, str]:
        """The panes' HTML for step ``i``, cached per step and colour choice: showing a step
        again, or going back to it, costs a dictionary lookup (:attr:`cache_hits` counts them).
        """
        return self._panes(i, self.selected_tags, self._scroll_c)

    def _panes(self, i: int, selected: tuple[str, ...], scroll_c: bool) -> dict[str, str]:
        key = (i, selected, scroll_c)
        cached = self._cache.get(key)
        if cached is not None:
            self.cache_hits += 1
            return cached
        self.cache_misses += 1
        s = self.session
        view = s.step(i)
        step = view.step
        note = step.note.splitlines()[0] if step.note and step.error is None else ""
        header = (f"{_html.escape(step.stage)} <span style='font-weight:normal;color:{MUTED}'>"
                  f"{_html.escape(note)}</span></div>")
        if step.error is not None:
            header += R.error_banner(step.error)

        # one provenance for every pane (the whole trace's, computed once per session), in the
        # step's colours: given when the step is drawn with every tag, kept when tags are chosen
        if selected and i not in self._colors:
            self._panes(i, (), scroll_c)
        prov = s.provenance().for_view(self._colors.setdefault(i, ViewColors()))
        if selected:
            prov = prov.only(selected)

        # the drawing (first: its nodes get the step's first colours, distinct while they last): this step's artifacts, else the latest drawn before it
        focus = R.step_focus(step)
        source_i, arts = i, R.drawn_artifacts(step)
        if not arts:
            for j in range(i - 1, -1, -1):
                arts = R.drawn_artifacts(s.steps[j])
                if arts:
                    source_i = j
                    break
        if arts:
            note = "" if source_i == i else (f"<div style='color:{MUTED};font-size:12px'>this step drew nothing; "
                                             f"showing step {source_i} ({_html.escape(s.steps[source_i].stage)})</div>")
            # (each drawing at the zoom level its kind was given at an earlier step)
            drawing = note + "".join(R.render_artifact(a, focus, prov or None) for a in arts) + zoom_restore()
        else:
            drawing = "<i>(nothing drawn yet)</i>"
        if not selected:
            prov.colors.drawn_so_far()

        # the shape operators of index notation are marked wherever the notation is shown
        shapes = shape_data_of(s.steps)
        program = R.render_program(view.program, prov, i, shapes=shapes) if view.program else "<i>(no program)</i>"
        if step.rewrites:
            program += R.render_rewrites(step)
        shown = diff_view(s, i)
        diff = (R.render_diff(shown.text) if shown.kind == "diff"
                else R.render_program(shown.text, prov, i, shapes=shapes))

        # the C: this step's, else as it stands here, else the final kernel's, labelled
        # at a lower:* step the looplet it lowers and its C lines are shown together: the C has
        # a focus bar, and the C pane scrolls to the chosen tag's first line (else the step's)
        c = c_view(s, i)
        lowered = s.provenance().lowered_at(i)
        if c.emitted_at is None:
            c_html = "<i>(no C yet" + (": lowering failed before emitting C" if s.error else "") + ")</i>"
        else:
            c_html = R.render_c(c.text, prov, focus=[t for t in lowered if t in prov])
            target = selected[0] if selected else next((t for t in lowered if t in prov), None)
            if target and scroll_c:
                c_html += scroll_to_tag(target)
            elif scroll_c and c_opening_line(s, i) is not None:
                # (not at the #includes: at the step's first linked line, else the kernel's)
                c_html += scroll_to_line(c_opening_line(s, i))
        for tag in selected:  # the chosen tags' parts stay linked (outlined) after the redraw
            program, drawing, c_html = (mark_linked(h, tag) for h in (program, drawing, c_html))
        out = {"header": header, "program": _pickable(program), "diff": _pickable(diff), "artifact": _pickable(drawing),
               "c": _pickable(c_html), "diff_title": _html.escape(shown.title), "c_title": _html.escape(c.title)}
        self._cache[key] = out
        return out

    def redraw(self) -> float:
        """Fill the panes for the current step; returns (and records) the seconds it took."""
        t0 = time.perf_counter()
        if not len(self.session):
            self.header.value = "<i>(empty trace)</i>"
            return 0.0
        html = self.render(self.session.current)
        self._show_legend()   # (in the step's colours)
        self.diff_title.value = f"<b>{html['diff_title']}</b>"
        self.c_title.value = f"<b>{html['c_title']}</b>"
        self.program_pane.value = html["program"]
        self.diff_pane.value = html["diff"]
        self.artifact_pane.value = html["artifact"]
        self.c_pane.value = html["c"]
        # the header last: each pane is its own message, applied in order, so a page showing the
        # new step's number shows all of that step (the browser tests wait on the header)
        self.header.value = self._step_number() + html["header"]
        elapsed = time.perf_counter() - t0
        self.redraw_times.append(elapsed)
        return elapsed

    def _step_number(self) -> str:
        """The header's "step N of M", which is the slider's N and M; under a filter it also
        gives the step's number in the whole trace (the slider counts the steps shown)."""
        s, vis = self.session, self.session.visible
        i = s.current
        pos, top = (vis.index(i), len(vis) - 1) if i in vis else (i, len(s) - 1)
        whole = (f" <span style='font-weight:normal;color:{MUTED}'>(step {i} of the whole trace's "
                 f"0-{len(s) - 1}; {len(vis)} of {len(s)} steps shown)</span>" if len(vis) != len(s) else "")
        return f"<div style='font:600 14px sans-serif'>step {pos} of {top}{whole}: "

    # --- actions ------------------------------------------------------------------------------
    def copy_as_code(self) -> str:
        """Fill the code box with Python that recreates this session and view; returns it."""
        recipe = self.session.recipe or "from explorer import explore\nsession = explore(trace)  # your trace\n"
        text = recipe + "\nfrom widgets import Explorer\nExplorer(session)\n"
        self.code.value = text
        self.code.layout.display = ""
        return text

    def export(self, path: str | None = None) -> str:
        """Write the session as one self-contained page (:func:`explorer.export_html`) to
        ``path`` (default: the "to" box, relative to the kernel's working directory); shows and
        returns the page's absolute path."""
        import os

        from explorer.export import export_html

        target = os.path.abspath(os.path.expanduser(path or self.export_path.value or "trace.html"))
        try:
            export_html(self.session, target)
        except OSError as e:
            self.export_note.value = (f"<span style='color:#a00'>could not write {_html.escape(target)}: "
                                      f"{_html.escape(e.strerror or str(e))}</span>")
            raise
        self.export_note.value = (f"<span style='font-size:12px'>wrote <code>{_html.escape(target)}</code> "
                                  f"({len(self.session)} steps; open it in a browser, it works offline)</span>")
        return target

    # --- re-lowering (see RebuildControls) ------------------------------------------------------
    @property
    def rebuild(self):
        return self.controls.rebuild

    @property
    def format_pickers(self) -> dict[str, FormatPicker]:
        return self.controls.format_pickers

    @property
    def schedule_editor(self) -> W.Textarea:
        return self.controls.schedule_editor

    @property
    def relower_button(self) -> W.Button:
        return self.controls.relower_button

    @property
    def auto_relower(self) -> bool:
        return self.controls.auto_relower

    @auto_relower.setter
    def auto_relower(self, value: bool) -> None:
        self.controls.auto_relower = bool(value)

    def formats(self) -> dict[str, Any]:
        """The formats chosen in the pickers: ``{tensor: compiler.format.Format}``."""
        return self.controls.formats()

    def relower(self) -> Session:
        """Rebuild with the pickers' formats and the schedule text, and show the result
        (a lowering error, e.g. a StrategyError from a schedule command that does not apply,
        shows in the error banner with the timeline at the failing step)."""
        return self.controls.relower()

    @classmethod
    def for_program(cls, program: str, strategy: str = "lattice", *, schedule: str = "",
                    checked: bool = False, options: Mapping[str, Any] | None = None,
                    **tensors) -> "Explorer":
        """An Explorer over ``compiler.lower(program, strategy, **tensors)`` with a per-level
        format picker for every tensor and a schedule editor; changing a picker re-lowers.

        ``tensors`` are the tensors or their formats (Tensors, arrays, shorthands, Formats),
        as for ``compiler.lower``; ``schedule`` is the initial schedule text, e.g.
        ``"reorder(i, k, j)"``. Other keyword arguments of :class:`Explorer` cannot be given
        here; set ``e.run`` and friends on the result.

        >>> e = Explorer.for_program("y[i] = A[i, j] * x[j]", A="csr", x="dense")  # doctest: +SKIP
        """
        ndims = program_ndims(program)
        shapes = loop_shapes(program, tensors)
        if shapes and "shapes" not in (options or {}):
            # (the pickers hold formats: a loop program's output indexed by a computed coordinate
            # keeps the shape of the tensor given for it)
            options = {**(options or {}), "shapes": shapes}
        rebuild = rebuild_for(program, strategy, checked=checked, options=options)
        formats = {name: initial_format(v, ndims.get(name)) for name, v in tensors.items()}
        e = cls(Trace(), rebuild=rebuild, formats=formats, schedule=schedule, ndims=ndims)
        e.relower()
        return e

    def time_it(self):
        """Time ``run`` against the baselines and show the table and plot."""
        if self.run is None:
            raise RuntimeError("this Explorer has no run callable to time")
        result = compare(self.run, self.baselines, repeats=5, check=self.check, name="sparsescope")
        self.timing_pane.value = result.html()
        return result


def _place(session: Session) -> tuple[str, int, int]:
    """Where a session is: the current step's stage family, how many steps of that family came
    before it, and its index (for :func:`_find_place` in a re-lowered session)."""
    i = session.current
    family = session.steps[i].stage.split(":", 1)[0]
    nth = sum(1 for s in session.steps[:i] if s.stage.split(":", 1)[0] == family)
    return family, nth, i


def _find_place(session: Session, place: tuple[str, int, int]) -> int:
    """The step of ``session`` at ``place``: the ``nth`` step of the family (its last one when
    there are fewer), else the step at the same index; always a visible one.

    >>> from compiler import Trace
    >>> t = Trace()
    >>> for stage in ("parse", "lattice", "lattice", "emit-c"):
    ...     _ = t.record(stage)
    >>> _find_place(explore(t), ("lattice", 1, 2)), _find_place(explore(t), ("lattice", 5, 9))
    (2, 2)
    >>> _find_place(explore(t), ("unfurl", 0, 1))
    1
    """
    family, nth, index = place
    vis = session.visible
    same = [i for i in vis if session.steps[i].stage.split(":", 1)[0] == family]
    if same:
        return same[min(nth, len(same) - 1)]
    if not vis:
        return 0
    return min(vis, key=lambda i: abs(i - index))


def _ranges(lines: Sequence[int]) -> str:
    """``[3, 4, 5, 9]`` as ``"3-5, 9"``."""
    out, start, prev = [], None, None
    for n in sorted(lines):
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev != start else str(start))
    return ", ".join(out)


def _tag_label(tag: str, prov) -> str:
    """A provenance menu entry: the tag, and for a looplet what the trace says it lowered.

    >>> from explorer.provenance import Provenance, TagInfo
    >>> p = Provenance({"looplet:Stepper:4": [3]},
    ...                {"looplet:Stepper:4": TagInfo("looplet:Stepper:4", "looplet", "j", ("A",), "Stepper")})
    >>> _tag_label("looplet:Stepper:4", p)
    'looplet:Stepper:4 (A on j)'
    """
    info = getattr(prov, "info", {}).get(tag)
    if info is None or info.kind != "looplet" or not info.index:
        return tag
    return f"{tag} ({', '.join(info.operands) or '-'} on {info.index})"


def _tag_where(info) -> str:
    """The legend's note on the program parts a tag colours."""
    if info is None or not info.index:
        return ""
    operands = f" and the accesses of {', '.join(info.operands)}" if info.operands else ""
    return f"; in the program: loops over {info.index}{operands}"
