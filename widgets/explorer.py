"""The notebook UI over an explorer session.

:class:`Explorer` shows one step at a time: a timeline (slider, previous/next, play), a filter
by stage or rewrite rule, "hide unchanged steps", and panes for the program, the diff from the
previous step, the step's drawings (its part highlighted) and the C code. A failed lowering
opens at the failing step under an error banner. "copy as code" gives the Python that
recreates the session. With ``rebuild=callable(formats, schedule) -> Trace`` it also shows
per-level format pickers per tensor (:class:`~widgets.pickers.FormatPicker`) and a schedule
editor; changing a picker, or "re-lower", rebuilds and redraws. :meth:`Explorer.for_program`
builds that callable from ``compiler.lower``.

:class:`Compare` puts two variants side by side: their C, a chosen artifact kind, and timing.

All the HTML comes from :mod:`explorer`; this module only arranges it.
"""

from __future__ import annotations

import html as _html
import time
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from compiler.trace import Trace
from explorer import renderers as R
from explorer.rebuild import format_code, initial_format, rebuild_for, schedule_code
from explorer.session import Session, explore
from explorer.timing import compare

from .pickers import LEVELS, FormatPicker

__all__ = ["Compare", "Explorer", "FormatPicker", "LEVELS"]

_PANE = W.Layout(border="1px solid #e3e3e3", padding="4px", overflow="auto", max_height="460px")


def _pane() -> W.HTML:
    return W.HTML(layout=W.Layout(**{k: getattr(_PANE, k) for k in ("border", "padding", "overflow",
                                                                      "max_height")}))


def _titled(title: str, pane: W.Widget) -> W.VBox:
    return W.VBox([W.HTML(f"<b>{_html.escape(title)}</b>"), pane], layout=W.Layout(flex="1 1 0", min_width="0"))


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
        self.rebuild = rebuild
        self.run, self.baselines, self.check = run, dict(baselines or {}), check
        self._cache: dict[tuple, dict[str, str]] = {}
        self._syncing = False
        self.redraw_times: list[float] = []

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
        self.program_pane, self.diff_pane = _pane(), _pane()
        self.artifact_pane, self.c_pane = _pane(), _pane()

        # copy as code
        self.copy_button = W.Button(description="copy as code", icon="clipboard")
        self.code = W.Textarea(layout=W.Layout(width="100%", height="90px", display="none"))
        self.copy_button.on_click(lambda _: self.copy_as_code())

        # format pickers and schedule editor (only with a rebuild callable)
        self.auto_relower = auto_relower
        self.format_pickers: dict[str, FormatPicker] = {}
        self.schedule_editor = W.Textarea(value=schedule, description="schedule",
                                          placeholder="e.g. reorder(i, k, j); precompute(j, w); parallelize(i)",
                                          layout=W.Layout(width="420px", height="60px"))
        self.schedule_editor.add_class("ss-schedule")
        self.relower_button = W.Button(description="re-lower", button_style="primary")
        self.relower_button.add_class("ss-relower")
        self.relower_button.on_click(lambda _: self.relower())
        controls_rebuild = []
        if rebuild is not None:
            ndims = dict(ndims or {})
            for name, fmt in (formats or {}).items():
                picker = FormatPicker(name, initial_format(fmt, ndims.get(name)))
                picker.on_change(self._on_format)
                self.format_pickers[name] = picker
            controls_rebuild = [W.VBox([*self.format_pickers.values()]),
                                W.HBox([self.schedule_editor, self.relower_button])]

        # timing
        self.time_button = W.Button(description="time it", icon="clock-o")
        self.timing_pane = W.HTML()
        self.time_button.on_click(lambda _: self.time_it())
        timing = [W.HBox([self.time_button]), self.timing_pane] if run is not None else []

        # stable CSS classes, so browser tests (and users' stylesheets) can find the parts
        self.add_class("sparsescope-explorer")
        for widget, cls in ((self.prev_button, "ss-prev"), (self.next_button, "ss-next"),
                            (self.header, "ss-header"), (self.program_pane, "ss-program"),
                            (self.diff_pane, "ss-diff"), (self.artifact_pane, "ss-drawing"),
                            (self.c_pane, "ss-c"), (self.error_banner, "ss-error"),
                            (self.provenance, "ss-provenance"), (self.provenance_legend, "ss-provenance-legend")):
            widget.add_class(cls)
        timeline = W.HBox([self.play, self.prev_button, self.slider, self.next_button])
        filters = W.HBox([self.filter, self.hide_unchanged, self.provenance, self.provenance_legend])
        panes = W.VBox([
            W.HBox([_titled("program", self.program_pane), _titled("diff from the previous step", self.diff_pane)]),
            W.HBox([_titled("drawing", self.artifact_pane), _titled("C", self.c_pane)]),
        ])
        self.children = [*controls_rebuild, self.error_banner, timeline, filters, self.header, panes,
                         *timing, W.HBox([self.copy_button]), self.code]
        self.set_session(explore(source))

    # --- session -----------------------------------------------------------------------------
    def set_session(self, session: Session) -> None:
        """Show ``session`` (after a rebuild): reset filters and caches, open at the failure."""
        self.session = session
        self._cache.clear()
        self._syncing = True
        try:
            options = [("all steps", "")]
            options += [(f"stage {f}", f"stage:{f}") for f in session.stage_families()]
            options += [(f"stage {s}", f"stage:{s}") for s in session.stages() if ":" in s]
            options += [(f"rule {r}", f"rule:{r}") for r in session.rules()]
            self.filter.options = options
            self.filter.value = ""
            self.hide_unchanged.value = False
            session.clear_filters()
            prov = R.collect_provenance(a for _, a in session.artifacts())
            self.provenance.options = [("all", "")] + [(k, k) for k in prov]
            self.provenance.value = ""
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
        self.provenance.value = tag or ""

    def _on_provenance(self, _change) -> None:
        if self._syncing:
            return
        self._show_legend()
        self.redraw()

    def _show_legend(self) -> None:
        tag = self.provenance.value or ""
        prov = getattr(self, "_provenance", {})
        if not tag or tag not in prov:
            self.provenance_legend.value = ""
            return
        lines = prov[tag]
        self.provenance_legend.value = (
            f"<span style='background:{R.color_for(tag)};padding:1px 6px;border-radius:3px;"
            f"font:12px monospace'>{_html.escape(tag)}</span> <span style='font-size:12px;color:#555'>"
            f"C lines {_html.escape(_ranges(lines))}; drawing nodes named "
            f"{_html.escape(' or '.join(R.tag_names(tag)))}</span>")

    # --- drawing ------------------------------------------------------------------------------
    def render(self, i: int) -> dict[str, str]:
        """The panes' HTML for step ``i`` (cached per step and colour choice)."""
        key = (i, self.provenance.value or "")
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        s = self.session
        view = s.step(i)
        step = view.step
        note = step.note.splitlines()[0] if step.note and step.error is None else ""
        header = (f"<div style='font:600 14px sans-serif'>step {i} of {len(s) - 1}: "
                  f"{_html.escape(step.stage)} <span style='font-weight:normal;color:#666'>"
                  f"{_html.escape(note)}</span></div>")
        if step.error is not None:
            header += R.error_banner(step.error)
        program = R.render_code(view.program) if view.program else "<i>(no program)</i>"
        if step.rewrites:
            program += R.render_rewrites(step)
        diff = R.render_diff(view.diff())

        selected = self.provenance.value or None
        all_prov = R.collect_provenance(a for _, a in s.artifacts())
        step_prov = R.collect_provenance(step.artifacts)
        prov = step_prov or all_prov
        if selected:
            prov = {selected: all_prov.get(selected, [])}

        # the drawing: this step's artifacts, else the latest drawn before it
        focus = R.step_focus(step)
        source_i, arts = i, [a for a in step.artifacts if a.kind != "c"]
        if not arts:
            for j in range(i - 1, -1, -1):
                arts = [a for a in s.steps[j].artifacts if a.kind != "c"]
                if arts:
                    source_i = j
                    break
        if arts:
            note = "" if source_i == i else (f"<div style='color:#888;font-size:12px'>this step drew nothing; "
                                             f"showing step {source_i} ({_html.escape(s.steps[source_i].stage)})</div>")
            drawing = note + "".join(R.render_artifact(a, focus, prov or None) for a in arts)
        else:
            drawing = "<i>(nothing drawn yet)</i>"

        # the C: this step's, else the kernel's final C
        c_here = [a for a in step.artifacts if a.kind == "c"]
        c_art = c_here[-1] if c_here else s.last_artifact("c")
        if c_art is None:
            c_html = "<i>(no C yet" + (": lowering failed before emitting C" if s.error else "") + ")</i>"
        else:
            c_html = R.render_c(c_art.text, prov)
        out = {"header": header, "program": program, "diff": diff, "artifact": drawing, "c": c_html}
        self._cache[key] = out
        return out

    def redraw(self) -> float:
        """Fill the panes for the current step; returns (and records) the seconds it took."""
        t0 = time.perf_counter()
        if not len(self.session):
            self.header.value = "<i>(empty trace)</i>"
            return 0.0
        html = self.render(self.session.current)
        self.header.value = html["header"]
        self.program_pane.value = html["program"]
        self.diff_pane.value = html["diff"]
        self.artifact_pane.value = html["artifact"]
        self.c_pane.value = html["c"]
        elapsed = time.perf_counter() - t0
        self.redraw_times.append(elapsed)
        return elapsed

    # --- actions ------------------------------------------------------------------------------
    def copy_as_code(self) -> str:
        """Fill the code box with Python that recreates this session and view; returns it."""
        recipe = self.session.recipe or "from explorer import explore\nsession = explore(trace)  # your trace\n"
        text = recipe + "\nfrom widgets import Explorer\nExplorer(session)\n"
        self.code.value = text
        self.code.layout.display = ""
        return text

    def formats(self) -> dict[str, Any]:
        """The formats chosen in the pickers: ``{tensor: compiler.format.Format}``."""
        return {name: p.value for name, p in self.format_pickers.items()}

    def _on_format(self, _fmt) -> None:
        if self.auto_relower:
            self.relower()

    def _recipe(self, formats: dict, schedule: str) -> str:
        rebuild = self.rebuild
        program = getattr(rebuild, "program", None)
        if isinstance(program, str):
            try:
                sched = schedule_code(schedule)
            except Exception:
                sched = repr(schedule)
            args = "".join(f", {k}={format_code(v) if hasattr(v, 'mode_order') else repr(v)}"
                           for k, v in formats.items())
            opts = f", options={{'schedule': {sched}}}" if sched != "[]" else ""
            return ("import compiler\n"
                    "from compiler.format import Format\n"
                    "from compiler.levels import *\n"
                    "from explorer import explore\n\n"
                    "def build(trace):\n"
                    f"    compiler.lower({program!r}, {rebuild.strategy!r}, trace=trace{opts}{args})\n\n"
                    "session = explore(build)\n")
        name = getattr(rebuild, "__qualname__", "rebuild")
        return ("from explorer import explore\n"
                f"# {name} is your rebuild(formats, schedule) -> Trace\n"
                f"session = explore(lambda trace: trace.steps.extend("
                f"{name}({formats!r}, {schedule!r}).steps))\n")

    def relower(self) -> Session:
        """Rebuild with the pickers' formats and the schedule text, and show the result
        (a lowering error, e.g. a StrategyError from a schedule command that does not apply,
        shows in the error banner with the timeline at the failing step)."""
        if self.rebuild is None:
            raise RuntimeError("this Explorer has no rebuild callable")
        formats, schedule = self.formats(), self.schedule_editor.value
        rebuild = self.rebuild

        def build(trace: Trace) -> None:
            try:
                result = rebuild(formats, schedule)
            except Exception as e:
                partial = getattr(e, "trace", None)
                if isinstance(partial, Trace):
                    trace.steps[:] = partial.steps
                raise
            result = getattr(result, "trace", result)
            if not isinstance(result, Trace):
                raise TypeError(f"rebuild must return a Trace (or an object with .trace), "
                                f"not {type(result).__name__}")
            trace.steps[:] = result.steps

        session = explore(build, recipe=self._recipe(formats, schedule))
        self.set_session(session)
        return session

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
        from explorer.rebuild import program_ndims
        ndims = program_ndims(program)
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


def _signature_kind(kinds: Sequence[str]) -> str | None:
    """The drawing that characterizes a strategy's trace (its lattices or its looplet nests)."""
    for k in ("lattice", "looplet-nest", "cfir", "iteration-graph", "fiber-tree"):
        if k in kinds:
            return k
    return kinds[0] if kinds else None


class Compare(W.HBox):
    """Two variants side by side: ``Compare(a, b, labels=("lattice", "looplets"))``.

    Each column shows the variant's final C and its drawings of the chosen kind (the artifacts
    of that kind from every step, up to ``max_drawings``). ``kind`` picks the initial kind: one
    name for both columns, or a pair, one per column (``("lattice", "looplet-nest")`` puts the
    lattices of one strategy next to the looplet nests of the other; offered by default when the
    two variants draw different things). With ``run_a`` and ``run_b`` (zero-argument kernel
    calls) a "time both" button times them next to the ``baselines``.
    """

    def __init__(self, a: Any, b: Any, labels: Sequence[str] = ("a", "b"),
                 run_a: Callable | None = None, run_b: Callable | None = None,
                 baselines: Mapping[str, Callable] | None = None,
                 kind: str | tuple[str, str] | None = None, max_drawings: int = 6):
        super().__init__()
        self.sessions = (explore(a), explore(b))
        self.labels = tuple(labels)
        self.runs = (run_a, run_b)
        self.baselines = dict(baselines or {})
        self.max_drawings = max_drawings
        per = [list(dict.fromkeys(art.kind for _, art in s.artifacts() if art.kind not in ("c", "ir")))
               for s in self.sessions]
        kinds = list(dict.fromkeys(k for s in self.sessions for _, art in s.artifacts()
                                   for k in [art.kind] if k != "c"))
        # a dropdown value is one kind for both columns, or "a | b": one kind per column
        options: list[str] = []
        signature = tuple(_signature_kind(p) for p in per)
        if all(signature) and signature[0] != signature[1]:
            options.append(" | ".join(signature))
        if isinstance(kind, tuple):
            kind = " | ".join(kind)
        options += kinds
        if kind and kind not in options:
            options.insert(0, kind)
        self.kind = W.Dropdown(options=options or ["(none)"], value=kind or (options or ["(none)"])[0],
                               description="drawing", layout=W.Layout(width="360px"))
        self.kind.observe(lambda _: self.redraw(), names="value")
        self.c_panes = (_pane(), _pane())
        self.artifact_panes = (_pane(), _pane())
        self.headers = (W.HTML(), W.HTML())
        self.timing_pane = W.HTML()
        self.time_button = W.Button(description="time both", icon="clock-o")
        self.time_button.on_click(lambda _: self.time_both())
        columns = [W.VBox([self.headers[k], _titled("C", self.c_panes[k]),
                           _titled("drawing", self.artifact_panes[k])], layout=W.Layout(flex="1 1 0", min_width="0"))
                   for k in range(2)]
        extra = [self.time_button, self.timing_pane] if run_a is not None and run_b is not None else []
        self.children = [W.VBox([self.kind, W.HBox(columns), *extra], layout=W.Layout(width="100%"))]
        self.redraw()

    def redraw(self) -> None:
        for k, s in enumerate(self.sessions):
            state = f" — failed: {_html.escape(s.error)}" if s.error else ""
            self.headers[k].value = f"<b>{_html.escape(self.labels[k])}</b>: {len(s)} steps{state}"
            c = s.last_artifact("c")
            prov = R.collect_provenance(a for _, a in s.artifacts())
            self.c_panes[k].value = R.render_c(c.text, prov) if c else "<i>(no C)</i>"
            value = str(self.kind.value or "")
            pair = value.split(" | ") if " | " in value else [value, value]
            kind = pair[k] if value != "(none)" else ""
            arts = [a for _, a in s.artifacts(kind)] if kind else []
            shown = arts[-self.max_drawings:]
            more = (f"<div style='color:#888;font-size:12px'>the last {len(shown)} of {len(arts)} "
                    f"drawings</div>" if len(arts) > len(shown) else "")
            self.artifact_panes[k].value = (more + "".join(R.render_artifact(a, provenance=prov or None)
                                                           for a in shown) if shown
                                            else f"<i>(no {_html.escape(str(kind or 'drawing'))})</i>")

    def time_both(self):
        run_a, run_b = self.runs
        if run_a is None or run_b is None:
            raise RuntimeError("Compare needs run_a and run_b to time")
        result = compare(run_a, {self.labels[1]: run_b, **self.baselines}, repeats=5, name=self.labels[0])
        self.timing_pane.value = result.html()
        return result
