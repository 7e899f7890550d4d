"""Two lowerings side by side under one stage slider (the explorer's :class:`Compare`).

The slider walks both traces at once, aligned by stage family (:mod:`explorer.align`): parse
next to parse, the lattice of ``j`` next to the unfurl of ``j``, C next to C. Each column
shows its step, the C as it stands there (before any C, the program, its parts tagged as the
single view tags them, and the kernel's C below it), and its drawings of the chosen kind so far; "time both" times both kernels in one table. Each column links its
own C and drawing (:mod:`explorer.linking`): hovering or clicking a C line outlines the
lattice point or looplet of that column, never the other column's parts of the same tag.
"""

from __future__ import annotations

import html as _html
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from compiler.trace import Trace
from explorer import renderers as R
from explorer.align import Station, align
from explorer.linking import link_handlers, scroll_to_line
from explorer.rebuild import initial_format, program_ndims, rebuild_for
from explorer.session import Session, explore
from explorer.shapeviews import shape_data_of
from explorer.stepdiff import c_opening_line, c_view
from explorer.theme import MUTED
from explorer.timing import compare
from explorer.zoom import zoom_restore

from .explorer import pane, titled
from .pickers import RebuildControls
from .saved import saved_view_note

__all__ = ["Compare", "DRAWING_CAP", "KERNEL_C_MOST"]

#: The most a Compare drawing pane grows to with its drawings; taller ones scroll inside it.
DRAWING_CAP = "560px"
#: The most the kernel's C below a column's program (before any C) is tall: with the program
#: above it, within the C pane's 420 px.
KERNEL_C_MOST = "300px"


def _signature_kind(kinds: Sequence[str]) -> str | None:
    """The drawing that characterizes a strategy's trace (its lattices or its looplet nests)."""
    for k in ("lattice", "looplet-nest", "cfir", "iteration-graph", "fiber-tree"):
        if k in kinds:
            return k
    return kinds[0] if kinds else None


def _pair(value: Any, what: str, kinds: tuple = (tuple, list)) -> tuple:
    """``value`` for each side: a pair as is, anything else twice."""
    if isinstance(value, kinds):
        if len(value) != 2:
            raise ValueError(f"Compare takes one {what} for both sides or a pair (one per side), "
                             f"not {len(value)}")
        return tuple(value)
    return (value, value)


class Compare(W.HBox):
    """Two variants side by side: ``Compare(a, b, labels=("lattice", "looplets"))``.

    One stage slider moves both columns: its stations are every step of both traces, aligned
    by stage family (:func:`explorer.align.align`: parse with parse, the lattice of ``j`` with the
    unfurl of ``j``, emit-c with emit-c); it opens at the last. Each column shows its step, the C
    as it stands at that step (before any C, the program there) and its drawings of the chosen
    kind up to that step (the last ``max_drawings``). ``kind`` picks the initial kind: one
    name for both columns, or a pair, one per column (``("lattice", "looplet-nest")`` puts the
    lattices of one strategy next to the looplet nests of the other; offered by default when the
    two variants draw different things). With ``run_a`` and ``run_b`` (zero-argument kernel
    calls) a "time both" button times them next to the ``baselines``.

    With ``rebuild`` (one ``rebuild(formats, schedule) -> Trace`` for both sides, or a pair)
    each column has its own format pickers (``formats``: one ``{tensor: format}`` or a pair)
    and schedule editor (``schedule``: text or a pair), as :class:`Explorer` has; changing one
    re-lowers and redraws that column only. :meth:`for_program` builds them from
    ``compiler.lower``.
    """

    def __init__(self, a: Any, b: Any, labels: Sequence[str] = ("a", "b"),
                 run_a: Callable | None = None, run_b: Callable | None = None,
                 baselines: Mapping[str, Callable] | None = None,
                 kind: str | tuple[str, str] | None = None, max_drawings: int = 6, *,
                 rebuild: Callable | Sequence[Callable | None] | None = None,
                 formats: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
                 schedule: str | Sequence[str] = "", ndims: Mapping[str, int] | None = None,
                 auto_relower: bool = True):
        super().__init__()
        self.sessions = [explore(a), explore(b)]
        self.labels = tuple(labels)
        self.runs = (run_a, run_b)
        self.baselines = dict(baselines or {})
        self.max_drawings = max_drawings
        self._cache: dict[tuple, tuple[str, str]] = {}
        self.cache_hits = self.cache_misses = 0
        self._syncing = False

        # per side: pickers and schedule editor, re-lowering that side
        rebuilds, formats_, schedules = _pair(rebuild, "rebuild"), _pair(formats, "formats"), _pair(schedule, "schedule")
        self.controls: list[RebuildControls | None] = []
        for k in range(2):
            if rebuilds[k] is None:
                self.controls.append(None)
                continue
            c = RebuildControls(rebuilds[k], formats_[k], schedules[k] or "", ndims, auto_relower)
            # (the commands' signatures wrap to a different number of lines in each column and would
            # push its panes out of line with the other's: the buttons' tooltips give them here)
            c.schedule_help.layout.display = "none"
            c.on_session(lambda session, k=k: self.set_session(k, session))
            c.add_class(f"ss-side-{'ab'[k]}")
            self.controls.append(c)

        if isinstance(kind, tuple):
            kind = " | ".join(kind)
        self._initial_kind = kind
        self.kind = W.Dropdown(description="drawing", layout=W.Layout(width="360px"))
        self.kind.add_class("ss-kind")
        self._set_kind_options(kind)
        self.kind.observe(lambda _: self.redraw(), names="value")
        # equal heights: each column's C and drawing, and the two columns, line up (the rows of
        # the columns' grid are shared, so a row is as tall as the taller column's pane). A C pane
        # grows with its C up to 420 px: at a step without C yet it shows a few lines of program,
        # and was a tall empty box; a drawing pane grows with its drawings up to DRAWING_CAP and
        # scrolls beyond (fixed at 420 px, the parse step's tree sat in a box half empty)
        self.c_panes = (pane(most="420px"), pane(most="420px"))
        self.artifact_panes = (pane(most=DRAWING_CAP), pane(most=DRAWING_CAP))
        for k in range(2):
            self.c_panes[k].add_class("ss-c")
            self.artifact_panes[k].add_class("ss-drawing")
        self.headers = (W.HTML(), W.HTML())
        self.steps_shown = (W.HTML(), W.HTML())   # which step each column is at
        code_boxes = [titled("C", self.c_panes[k], across=False) for k in range(2)]
        self.code_titles = tuple(box.children[0] for box in code_boxes)
        # one slider for both columns (its stations: explorer.align)
        self.stations: list[Station] = []
        self.stage_slider = W.IntSlider(min=0, max=0, value=0, description="stage", continuous_update=True,
                                        layout=W.Layout(width="420px"))
        self.stage_slider.add_class("ss-stage-slider")
        self.stage_label = W.HTML()
        self.stage_label.add_class("ss-stage")
        self.stage_slider.observe(lambda _: self.redraw(), names="value")
        self.timing_pane = W.HTML()
        self.time_button = W.Button(description="time both", icon="clock-o")
        self.time_button.on_click(lambda _: self.time_both())
        for k in range(2):
            self.steps_shown[k].add_class(f"ss-step-{'ab'[k]}")
        # The columns share their rows (a grid whose columns are subgrids): a row is as tall as the
        # taller column's part, so the C panes start at one height in both columns whatever each
        # column's controls take (the lattice's schedule buttons wrap to a second row when narrow,
        # where squeezed into one they read "reo…", "preco…"). A side without controls holds an
        # empty box in their row.
        parts = [[self.headers[k], self.controls[k] if self.controls[k] is not None else W.Box(),
                  self.steps_shown[k], code_boxes[k], titled("drawing", self.artifact_panes[k], across=False)]
                 for k in range(2)]
        columns = [W.VBox(parts[k], layout=W.Layout(display="grid", grid_template_rows="subgrid",
                                                    grid_template_columns="minmax(0, 1fr)",
                                                    grid_area="ab"[k], min_width="0"))
                   for k in range(2)]
        for c in self.controls:
            if c is not None:
                c.wrap_commands()
        for k, column in enumerate(columns):   # each column is the root its parts link within
            column.add_class(_COLUMN)
            column.add_class(f"{_COLUMN}-{'ab'[k]}")
        self.timing_row = W.VBox([self.time_button, self.timing_pane])
        self.timing_row.add_class("ss-timing-row")
        self.timing_row.layout.display = "" if self.can_time else "none"
        self.add_class("sparsescope-compare")
        self.columns = tuple(columns)
        self.children = [W.VBox([saved_view_note(), W.HBox([self.stage_slider, self.stage_label]), self.kind,
                                 W.GridBox(columns, layout=W.Layout(
                                     grid_template_columns="repeat(2, minmax(0, 1fr))", grid_gap="0 8px",
                                     grid_template_areas=" ".join(['"a b"'] * len(parts[0])))),
                                 self.timing_row], layout=W.Layout(width="100%"))]
        self._align(keep=False)
        self.redraw()

    @property
    def can_time(self) -> bool:
        """Whether "time both" has kernels to run (``run_a`` and ``run_b``, or data to lower)."""
        return all(r is not None for r in self.runs) or getattr(self, "_data", None) is not None

    # --- the stage slider -------------------------------------------------------------------------
    def _align(self, keep: bool = True) -> None:
        """Recompute the stations (after a side re-lowered); keep the place both sides had
        reached (a station of the same key) or else go to the last station."""
        old = self.stations[self.stage_slider.value] if keep and self.stations else None
        self.stations = align(*self.sessions) if all(len(s) for s in self.sessions) else []
        top = max(0, len(self.stations) - 1)
        pos = top
        if old is not None and old.key is not None:
            pos = next((n for n, st in enumerate(self.stations) if st.key == old.key), top)
        self._syncing = True
        try:
            self.stage_slider.max = top
            self.stage_slider.value = pos
        finally:
            self._syncing = False

    @property
    def station(self) -> Station | None:
        """The stage slider's station: the step each column shows."""
        return self.stations[self.stage_slider.value] if self.stations else None

    def step_of(self, side: int) -> int:
        """The step column ``side`` shows (its last step when the other side is empty)."""
        st = self.station
        if st is None:
            return max(0, len(self.sessions[side]) - 1)
        return (st.a, st.b)[side]

    def goto_stage(self, key: str) -> Station:
        """Move the slider to the first station where both columns reached ``key`` (a stage
        family shared by both strategies: ``"parse"``, ``"index j"``, ``"emit-c"``...)."""
        for n, st in enumerate(self.stations):
            if st.key == key:
                self.stage_slider.value = n
                return st
        shared = [st.key for st in self.stations if st.key]
        raise ValueError(f"no stage {key!r} in both traces; the shared stages are {shared}")

    # --- kinds ----------------------------------------------------------------------------------
    def _set_kind_options(self, wanted: str | None = None) -> None:
        """The drawing menu for the current sessions, keeping the choice when it still exists."""
        per = [list(dict.fromkeys(art.kind for _, art in s.artifacts() if art.kind not in ("c", "ir")))
               for s in self.sessions]
        kinds = list(dict.fromkeys(k for s in self.sessions for _, art in s.artifacts()
                                   for k in [art.kind] if k != "c"))
        # a menu value is one kind for both columns, or "a | b": one kind per column
        options: list[str] = []
        signature = tuple(_signature_kind(p) for p in per)
        if all(signature) and signature[0] != signature[1]:
            options.append(" | ".join(signature))
        options += kinds
        if wanted and wanted not in options:
            options.insert(0, wanted)
        options = options or ["(none)"]
        value = wanted if wanted in options else options[0]
        self._syncing = True
        try:
            self.kind.options = options
            self.kind.value = value
        finally:
            self._syncing = False

    # --- sessions -------------------------------------------------------------------------------
    def set_session(self, side: int, session: Session) -> None:
        """Show ``session`` in column ``side`` (0 or 1), e.g. after that side re-lowered."""
        if side not in (0, 1):
            raise ValueError(f"Compare has sides 0 and 1, not {side!r}")
        self.sessions[side] = session
        self._cache = {key: v for key, v in self._cache.items() if key[0] != side}
        if self.timing_pane.value:
            self.timing_pane.value = ("<i>a side was re-lowered: the timing above was of the kernels "
                                      "given as run_a and run_b</i>" + self.timing_pane.value)
        self._set_kind_options(self.kind.value if self.kind.value != "(none)" else self._initial_kind)
        self._align()
        self.redraw()   # (the other column too: its step may move with the realigned stations)

    def relower(self, side: int | None = None) -> list[Session]:
        """Re-lower one side (``0`` or ``1``) or every side that has pickers; returns the sessions."""
        sides = [side] if side is not None else [k for k in range(2) if self.controls[k] is not None]
        for k in sides:
            if k not in (0, 1):
                raise ValueError(f"Compare has sides 0 and 1, not {k!r}")
            if self.controls[k] is None:
                raise RuntimeError(f"side {k} ({self.labels[k]}) has no rebuild callable to re-lower with")
            self.controls[k].relower()
        return list(self.sessions)

    def formats(self, side: int) -> dict[str, Any]:
        """The formats chosen in side ``side``'s pickers (``{}`` without pickers)."""
        c = self.controls[side]
        return c.formats() if c is not None else {}

    # --- drawing --------------------------------------------------------------------------------
    def render(self, side: int) -> tuple[str, str]:
        """``(C html, drawings html)`` of one column at its step, for the chosen kind (cached)."""
        value = str(self.kind.value or "")
        at = self.step_of(side)
        key = (side, value, at)
        if key in self._cache:
            self.cache_hits += 1
            return self._cache[key]
        self.cache_misses += 1
        s = self.sessions[side]
        # the column is a view: its tags get distinct colours, its drawings' nodes first
        prov = s.provenance().for_view()
        pair = value.split(" | ") if " | " in value else [value, value]
        kind = pair[side] if value != "(none)" else ""
        arts = [a for i, a in s.artifacts(kind) if i <= at] if kind else []
        shown = arts[-self.max_drawings:]
        more = (f"<div style='color:{MUTED};font-size:12px'>the last {len(shown)} of {len(arts)} "
                f"drawings</div>" if len(arts) > len(shown) else "")
        # (none of the chosen kind yet: the latest drawing so far, as the parse step's expression tree)
        last = next((i for i in range(at, -1, -1) if R.drawn_artifacts(s.steps[i])), None) \
            if kind and not arts and len(s) else None
        if last is not None:
            shown = R.drawn_artifacts(s.steps[last])[-self.max_drawings:]
            more = (f"<div style='color:{MUTED};font-size:12px'>no {_html.escape(kind)} up to step {at}; "
                    f"the drawing of step {last} ({_html.escape(s.steps[last].stage)})</div>")
        drawing = (more + "".join(R.render_artifact(a, provenance=prov or None) for a in shown) + zoom_restore() if shown
                   else f"<i>(no {_html.escape(str(kind or 'drawing'))} up to step {at})</i>")
        prov.colors.drawn_so_far()
        c = c_view(s, at) if len(s) else None
        if c is not None and c.emitted_at is not None and c.emitted_at <= at:
            c_html = R.render_c(c.text, prov)
        else:   # no C yet at this step (or none at all): the program as it stands
            why = "a later step emits it" if c is not None and c.emitted_at is not None else (
                "lowering failed before emitting C" if s.error else "this trace emits none")
            program = s.program_text(at) if len(s) else ""
            # its parts tagged as the single view tags them (the shape operators' too), and the C
            # they became below it, as the single view shows it beside the step: a C line then
            # outlines the program's parts it came from, in its own column
            c_html = (f"<div style='color:{MUTED};font-size:12px'>(no C yet: {why}; the program "
                      f"after step {at})</div>"
                      + (R.render_program(program, prov, at, shapes=shape_data_of(s.steps)) if program else ""))
            if program and c is not None and c.emitted_at is not None:
                # (a box of its own, opened at the step's first linked line, not the #includes:
                # the program above it stays in view)
                opens = c_opening_line(s, at)
                c_html += (f"<div style='font:600 12px sans-serif;margin:8px 0 2px'>{_html.escape(c.title)}</div>"
                           f"<div class='{_KERNEL_C}'>{R.render_c(c.text, prov, most=KERNEL_C_MOST)}</div>"
                           + (scroll_to_line(opens, "." + _KERNEL_C, "." + _COLUMN) if opens is not None else ""))
        self._cache[key] = (_linked(c_html), _linked(drawing))
        return self._cache[key]

    def redraw(self, side: int | None = None) -> None:
        """Fill both columns (or only column ``side``)."""
        if self._syncing:
            return
        st = self.station
        # the slider moves both columns; a side that re-lowered alone redraws alone
        for k in ([side] if side is not None else range(2)):
            s = self.sessions[k]
            state = f" — failed: {_html.escape(s.error)}" if s.error else ""
            self.headers[k].value = f"<b>{_html.escape(self.labels[k])}</b>: {len(s)} steps{state}"
            at = self.step_of(k)
            if len(s):
                step = s.steps[at]
                note = step.note.splitlines()[0] if step.note and step.error is None else ""
                # (wrapping anywhere: a compile step's note names its library, one word wider than
                # a column at 900 px)
                self.steps_shown[k].value = (
                    f"<div style='font:600 13px sans-serif;overflow-wrap:anywhere'>step {at} of {len(s) - 1}: "
                    f"{_html.escape(step.stage)} "
                    f"<span style='font-weight:normal;color:{MUTED}'>{_html.escape(note)}</span></div>")
                c = c_view(s, at)
                self.code_titles[k].value = (
                    f"<b>{_html.escape(c.title)}</b>" if c.emitted_at is not None and c.emitted_at <= at
                    else "<b>program (no C yet), then the kernel's C</b>" if c.emitted_at is not None
                    else "<b>program (no C yet)</b>")
            self.c_panes[k].value, self.artifact_panes[k].value = self.render(k)
        # the stage label last: each pane is its own message, applied in order, so a page showing
        # the new stage shows both columns at it (the browser tests wait on the label)
        self.stage_label.value = (f"<span style='font:13px sans-serif'>{self.stage_slider.value} of "
                                  f"{self.stage_slider.max}: {self._station_text(st)}</span>")

    def _station_text(self, st: Station | None) -> str:
        """What the slider's station shows: the shared stage, or which side moved."""
        if st is None:
            return ""
        a, b = (self.sessions[k].steps[(st.a, st.b)[k]].stage for k in range(2))
        if st.key is not None:
            return f"<b>{_html.escape(st.key)}</b> ({_html.escape(a)} ↔ {_html.escape(b)})"
        return f"{_html.escape(a)} ↔ {_html.escape(b)}"

    @classmethod
    def for_program(cls, program: str, strategies: str | Sequence[str] = ("lattice", "looplets"), *,
                    labels: Sequence[str] | None = None, schedule: str | Sequence[str] = "",
                    checked: bool = False, options: Mapping[str, Any] | None = None,
                    kind: str | tuple[str, str] | None = None, **tensors) -> "Compare":
        """Two lowerings of ``program`` side by side, each with its own format pickers and
        schedule editor: ``strategies`` is one strategy for both sides or a pair; a tensor given
        as a pair has one format (or tensor) per side.

        >>> c = Compare.for_program("y[i] = A[i, j] * x[j]", A="csr", x="dense")      # doctest: +SKIP
        >>> c = Compare.for_program("y[i] = A[i, j] * x[j]", "lattice", A=("csr", "dcsr"),
        ...                         x="dense")                                          # doctest: +SKIP
        """
        strategies = _pair(strategies, "strategy")
        ndims = program_ndims(program)
        sides = tuple({name: _pair(v, f"format of {name}", (tuple,))[k] for name, v in tensors.items()}
                      for k in range(2))
        rebuilds = tuple(rebuild_for(program, st, checked=checked, options=_with_shapes(program, side, options))
                         for st, side in zip(strategies, sides))
        formats = tuple({name: initial_format(_pair(v, f"format of {name}", (tuple,))[k], ndims.get(name))
                         for name, v in tensors.items()} for k in range(2))
        if labels is None:
            labels = [st if strategies[0] != strategies[1] else f"{st}: " + ", ".join(
                f"{n}={f[n].shorthand or f[n]}" for n in f) for st, f in zip(strategies, formats)]
        c = cls(Trace(), Trace(), labels=labels, kind=kind, rebuild=rebuilds, formats=formats,
                schedule=schedule, ndims=ndims)
        # tensors given as data (arrays, scipy matrices, Tensors): "time both" runs both kernels
        data = {name: v for name, v in tensors.items() if _is_data(v)}
        if data:
            c._data = (program, strategies, data)
            c.timing_row.layout.display = ""
        c.relower()
        # choose the drawing now that both sides have lowered: after the first side alone, the
        # menu held only its kinds, and the other side showed "(no iteration-graph)"
        c._set_kind_options(c._initial_kind)
        c.redraw()
        return c

    def time_both(self):
        """Time both sides in one table: ``run_a`` and ``run_b``, or, for :meth:`for_program`
        given data, both kernels as each side's pickers now lower them, next to the dense
        reference evaluator, each result checked against it."""
        run_a, run_b = self.runs
        check = None
        baselines = dict(self.baselines)
        if (run_a is None or run_b is None) and getattr(self, "_data", None) is not None:
            run_a, run_b = (self._data_run(k) for k in range(2))
            program, data = self._data[0], self._data[2]
            import compiler
            import numpy as np
            baselines.setdefault("numpy (reference)", lambda: compiler.evaluate(program, **data)[0])
            check = lambda a, b: np.allclose(_dense(a), _dense(b), equal_nan=True)  # noqa: E731
        if run_a is None or run_b is None:
            raise RuntimeError("Compare needs run_a and run_b to time (or Compare.for_program given data)")
        result = compare(run_a, {self.labels[1]: run_b, **baselines}, repeats=5, name=self.labels[0],
                         check=check)
        self.timing_pane.value = result.html()
        return result

    def _data_run(self, side: int) -> Callable[[], Any]:
        """A call of side ``side``'s kernel, lowered for its pickers' formats, on the data."""
        import compiler

        program, strategies, data = self._data
        formats = self.formats(side)
        tensors = {name: _as_tensor(v, formats.get(name), name) for name, v in data.items()}
        others = {name: f for name, f in formats.items() if name not in tensors}
        kernel = compiler.lower(program, strategies[side], **others, **tensors)
        return lambda: kernel(**tensors)


# the class of a column: linking (hover, click) stays inside the closest element that has it
_COLUMN = "ss-column"
_KERNEL_C = "ss-kernel-c"


def _linked(html: str) -> str:
    """``html`` in a box whose tagged parts link, on hover and click, the parts of the same
    tag in its column (its C lines and drawing nodes) and scroll its C pane."""
    return f'<div class="ss-linkable" {link_handlers(".ss-c", root="." + _COLUMN)}>{html}</div>'


def _with_shapes(program, tensors: Mapping[str, Any], options: Mapping[str, Any] | None):
    """``options`` with the ``shapes`` of the outputs of a loop program given as arrays or Tensors:
    the pickers hold formats, so an output indexed by a computed coordinate (a histogram's
    ``bins[img[r, c] >> shift]``) would otherwise lose the shape it was given."""
    from compiler.lowering import loop_shapes
    shapes = loop_shapes(program, dict(tensors))
    if not shapes or "shapes" in (options or {}):
        return options
    return {**(options or {}), "shapes": shapes}


def _is_data(value: Any) -> bool:
    """Whether a tensor given to :meth:`Compare.for_program` is data (not a format name,
    Format or level spec, nor a pair of those, one per side)."""
    from compiler.format import Format
    from compiler.levels.level import Level
    return not isinstance(value, (str, Format, Level, tuple, list)) and hasattr(value, "shape")


def _as_tensor(value: Any, fmt, name: str):
    """``value`` (a Tensor, numpy array or scipy matrix) as a Tensor in ``fmt``."""
    import numpy as np
    import scipy.sparse as sp

    import compiler
    if isinstance(value, compiler.Tensor):
        return value.asformat(fmt) if fmt is not None else value
    if sp.issparse(value):
        return compiler.Tensor.from_scipy(value, fmt, name=name)
    return compiler.Tensor.from_numpy(np.asarray(value), fmt if fmt is not None else "dense", name=name)


def _dense(result: Any):
    """A kernel's or the reference's result as a numpy array."""
    import numpy as np
    to_numpy = getattr(result, "to_numpy", None)
    return to_numpy() if callable(to_numpy) else np.asarray(result)
