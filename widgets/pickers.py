"""Per-level format pickers, like the TACO web tool's: one dropdown per level of a tensor plus
its mode order, building a :class:`compiler.format.Format`.

A :class:`FormatPicker` shows, for a tensor of order ``n``: a preset (``csr``, ``dcsr``, ...,
or ``custom``), ``n`` level dropdowns (outermost first) and a mode-order dropdown. A
``SparseCOO(m)`` level takes ``m`` modes, so the ``m - 1`` dropdowns after it are disabled.
``picker.value`` is the Format; ``picker.on_change(callback)`` calls back once per change.

:class:`RebuildControls` puts a picker per tensor next to a schedule editor over a
``rebuild(formats, schedule) -> Trace`` callable and re-lowers when they change.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Callable

import ipywidgets as W

from compiler import levels as L
from compiler.capabilities import PROGRAM_KINDS, program_kind
from compiler.errors import FormatError
from compiler.format import Format, parse_format

__all__ = ["FormatPicker", "LEVELS", "RebuildControls", "level_options", "program_output"]


def program_output(program: str) -> str | None:
    """The tensor a program of index notation assigns (None if it does not parse).

    >>> program_output("y[i] = A[i, j] * x[j]")
    'y'
    """
    from compiler.notation import Assign, parse

    try:
        parsed = parse(program)
    except Exception:   # the lowering reports it, in its own words
        return None
    return parsed.lhs.tensor if isinstance(parsed, Assign) else None

#: The level formats offered for one mode, by name (each takes its child as first argument).
LEVELS = {
    "Dense": L.Dense,
    "SparseList": L.SparseList,
    "SparseBand": L.SparseBand,
    "SparseBlockList": L.SparseBlockList,
    "RunList": L.RunList,
    "SparseRunList": L.SparseRunList,
    "SparseInterval": L.SparseInterval,
    "SparsePoint": L.SparsePoint,
    "SparseByteMap": L.SparseByteMap,
}

#: Presets offered per tensor order.
PRESETS = {1: ("dense", "sparse_vector", "coo"), 2: ("dense", "csr", "csc", "dcsr", "coo"),
           3: ("dense", "csf", "coo")}

_CUSTOM = "custom"
_COVERED = "↳ (COO)"


def level_options(slot: int, ndim: int) -> list[str]:
    """The level names offered at storage level ``slot`` of an ``ndim``-mode tensor.

    >>> level_options(0, 2)[-2:], level_options(1, 2)[-1]
    (['SparseCOO(1)', 'SparseCOO(2)'], 'SparseCOO(1)')
    """
    return [*LEVELS, *(f"SparseCOO({m})" for m in range(1, ndim - slot + 1))]


def _coo_modes(name: str) -> int:
    return int(name[len("SparseCOO("):-1]) if name.startswith("SparseCOO(") else 1


def _level_names(fmt: Format) -> list[str]:
    """One name per mode slot: the level's name, with the slots a SparseCOO covers marked."""
    names: list[str] = []
    for lvl in fmt.levels:
        if lvl.coordinate_list:
            names += [f"{lvl.name}({lvl.nmodes})"] + [_COVERED] * (lvl.nmodes - 1)
        else:
            names.append(lvl.name)
    return names


def _index_dtype(fmt: Format):
    for lvl in fmt.levels:
        dt = getattr(lvl, "index_dtype", None)
        if dt is not None:
            return dt
    return None


def build_format(names: list[str], mode_order, leaf, index_dtype=None) -> Format:
    """The Format of per-slot level ``names`` (outermost first) over the ``leaf`` Element.

    >>> from compiler.format import csr, dcsr
    >>> build_format(["SparseList", "SparseList"], (0, 1), csr().leaf, "int64") == dcsr()
    True
    """
    specs: list[tuple[str, int]] = []
    k = 0
    while k < len(names):
        m = _coo_modes(names[k])
        specs.append((names[k], m))
        k += m
    root = leaf
    for name, m in reversed(specs):
        cls = L.SparseCOO if name.startswith("SparseCOO(") else LEVELS[name]
        takes = index_dtype is not None and any(f.name == "index_dtype" for f in dataclasses.fields(cls))
        kw = {"index_dtype": index_dtype} if takes else {}
        # (a level storing a list of coordinate tuples takes its number of modes first)
        root = cls(m, root, **kw) if cls.coordinate_list else cls(root, **kw)
    return Format(root, tuple(mode_order))


class FormatPicker(W.HBox):
    """The pickers of one tensor: ``FormatPicker("A", csr())``; ``.value`` is the Format."""

    def __init__(self, name: str, fmt: Format | str, ndim: int | None = None):
        super().__init__()
        fmt = parse_format(fmt, ndim=ndim)
        self.name, self.ndim = name, fmt.ndim
        self.leaf, self.index_dtype = fmt.leaf, _index_dtype(fmt)
        self._callbacks: list[Callable[[Format], Any]] = []
        self._syncing = False
        self._why_not: Callable[[str], str | None] | None = None
        n = self.ndim
        self.label = W.HTML(f"<b>{name}</b>", layout=W.Layout(width="28px"))
        self.preset = W.Dropdown(options=[*PRESETS.get(n, ("dense", "coo")), _CUSTOM], value=_CUSTOM,
                                 layout=W.Layout(width="90px"), tooltip=f"{name}: a named format")
        self.levels = [W.Dropdown(options=level_options(k, n), layout=W.Layout(width="135px"),
                                  tooltip=f"{name}: storage level {k}") for k in range(n)]
        orders = [tuple(p) for p in itertools.permutations(range(n))]
        self.mode_order = W.Dropdown(options=[(f"modes {' '.join(map(str, o))}", o) for o in orders],
                                     value=fmt.mode_order, layout=W.Layout(width="110px"),
                                     tooltip=f"{name}: the mode each level stores")
        self.preset.add_class(f"ss-preset-{name}")
        self.mode_order.add_class(f"ss-order-{name}")
        for k, d in enumerate(self.levels):
            d.add_class("ss-level")
            d.add_class(f"ss-level-{name}-{k}")
        self.add_class("ss-format-picker")
        self.children = [self.label, self.preset, *self.levels, self.mode_order]
        self._show(fmt)
        self._value = fmt
        self.preset.observe(self._on_preset, names="value")
        for d in [*self.levels, self.mode_order]:
            d.observe(self._on_level, names="value")

    def wrap(self) -> None:
        """Lay the pickers out for a narrow column: the dropdowns wrap to more rows beside the
        tensor's name, each at its full width. (A matrix's four take about 470 px; in a Compare
        column at 900 px their one row ran past the column, its last dropdowns cut.)

        >>> p = FormatPicker("A", "csr")
        >>> p.wrap()
        >>> [type(c).__name__ for c in p.children], len(p.children[1].children)
        (['HTML', 'HBox'], 4)
        """
        dropdowns = [self.preset, *self.levels, self.mode_order]
        for d in dropdowns:
            d.layout.flex = "0 0 auto"
        self.label.layout.flex = "0 0 auto"
        # (no box wider than the column: a flex item is as wide as its content unless told otherwise)
        self.layout.min_width = "0"
        self.children = [self.label, W.HBox(dropdowns, layout=W.Layout(flex_flow="row wrap", flex="1 1 0",
                                                                       min_width="0"))]

    # --- value ------------------------------------------------------------------------------
    @property
    def value(self) -> Format:
        return self._value

    @value.setter
    def value(self, fmt) -> None:
        fmt = parse_format(fmt, ndim=self.ndim, fill=self.leaf.fill, dtype=self.leaf.dtype)
        if fmt.ndim != self.ndim:
            raise FormatError(f"{self.name} has {self.ndim} modes; {fmt} has {fmt.ndim}")
        self._show(fmt)
        self._set(fmt)

    def on_change(self, callback: Callable[[Format], Any]) -> None:
        """Call ``callback(format)`` after every change of this tensor's format."""
        self._callbacks.append(callback)

    def mark(self, why_not: Callable[[str], str | None] | None) -> None:
        """Mark the level options ``why_not(name)`` gives a reason against (None: clear the
        marks). A dropdown cannot disable one option, so the option's label says it and keeps
        the level's name as its value: ``✗ SparseBand (cannot assemble)``.

        >>> p = FormatPicker("x", "sparse_vector")
        >>> p.mark(lambda name: "the strategy cannot assemble it" if name == "SparseBand" else None)
        >>> [label for label, _ in p.levels[0].options if label.startswith("✗")]
        ['✗ SparseBand (cannot assemble)']
        >>> p.mark(None)
        >>> p.level_label("SparseBand")
        'SparseBand'
        """
        self._why_not = why_not
        self._show(self._value)

    def level_label(self, name: str) -> str:
        """An option's label: the level's name, marked when :meth:`mark` refuses it."""
        why = self._why_not(name) if self._why_not is not None and name != _COVERED else None
        if why is None:
            return name
        return f"✗ {name} ({'cannot assemble' if 'assemble' in why else 'cannot read'})"

    def _set(self, fmt: Format) -> None:
        if fmt == self._value:
            return
        self._value = fmt
        for cb in self._callbacks:
            cb(fmt)

    # --- syncing the dropdowns --------------------------------------------------------------
    def _show(self, fmt: Format) -> None:
        self._syncing = True
        try:
            names = _level_names(fmt)
            for k, (d, name) in enumerate(zip(self.levels, names)):
                options = level_options(k, self.ndim)
                if self._why_not is not None:   # (label, name) pairs only when marked
                    options = [(self.level_label(o), o) for o in options]
                d.options = options if name != _COVERED else [_COVERED]
                d.value = name
                d.disabled = name == _COVERED
            self.mode_order.value = fmt.mode_order
            short = fmt.shorthand
            self.preset.value = short if short in self.preset.options else _CUSTOM
        finally:
            self._syncing = False

    def _on_preset(self, change) -> None:
        if self._syncing or change["new"] == _CUSTOM:
            return
        self.value = parse_format(change["new"], ndim=self.ndim, fill=self.leaf.fill, dtype=self.leaf.dtype,
                                  index_dtype=self.index_dtype or "int64")

    def _on_level(self, _change) -> None:
        if self._syncing:
            return
        # re-read the slots: a SparseCOO(m) covers the next m - 1 slots; uncovered slots get
        # their options back (as SparseList when they were covered)
        names, k = [], 0
        while k < self.ndim:
            name = self.levels[k].value
            if name == _COVERED or name is None:
                name = "SparseList"
            m = min(_coo_modes(name), self.ndim - k)
            if name.startswith("SparseCOO("):
                name = f"SparseCOO({m})"
            names += [name] + [_COVERED] * (m - 1)
            k += m
        fmt = build_format([n for n in names], self.mode_order.value, self.leaf, self.index_dtype)
        self._show(fmt)
        self._set(fmt)


#: a kind of program (:data:`compiler.capabilities.PROGRAM_KINDS`) as a sentence names many
_PLURALS = {"loop program": "loop programs"}


class RebuildControls(W.VBox):
    """A format picker per tensor and a schedule editor over ``rebuild(formats, schedule)``;
    "re-lower" (or a picker change, with ``auto_relower``) rebuilds and hands the new session
    to the callbacks given to :meth:`on_session`. :class:`~widgets.Explorer` and each side of
    :class:`~widgets.Compare` hold one.

    >>> from explorer.rebuild import rebuild_for
    >>> c = RebuildControls(rebuild_for("y[i] = A[i, j] * x[j]"), {"A": "csr", "x": "dense"},
    ...                     ndims={"x": 1})  # doctest: +SKIP
    >>> c.on_session(print); c.relower()                                   # doctest: +SKIP
    """

    def __init__(self, rebuild: Callable[[dict, str], Any] | None, formats: dict | None = None,
                 schedule: str = "", ndims: dict | None = None, auto_relower: bool = True):
        super().__init__()
        from explorer.rebuild import initial_format

        self.rebuild = rebuild
        self.auto_relower = auto_relower
        self._wrapped = False   # (wrap_commands: laid out for a narrow column)
        self._callbacks: list[Callable] = []
        self.format_pickers: dict[str, FormatPicker] = {}
        ndims = dict(ndims or {})
        for name, fmt in (formats or {}).items():
            picker = FormatPicker(name, initial_format(fmt, ndims.get(name)))
            picker.on_change(self._on_format)
            self.format_pickers[name] = picker
        self.schedule_editor = W.Textarea(value=schedule, description="schedule",
                                          placeholder="e.g. reorder(i, k, j); precompute(j, w); parallelize(i)",
                                          layout=W.Layout(width="420px", height="60px"))
        self.schedule_editor.add_class("ss-schedule")
        #: a button per command the strategy's schedule takes (it adds the command to the editor),
        #: and the commands' signatures
        self.command_buttons, self.schedule_help = W.HBox(), W.HTML()
        self.command_buttons.add_class("ss-schedule-commands")
        self.schedule_help.add_class("ss-schedule-help")
        self.relower_button = W.Button(description="re-lower", button_style="primary",
                                       layout=W.Layout(flex="0 0 auto"))   # (never squeezed to "re...")
        self.relower_button.add_class("ss-relower")
        self.relower_button.on_click(lambda _: self.relower())
        self.add_class("ss-rebuild")
        self.schedule_row = W.HBox([W.VBox([self.schedule_editor, self.command_buttons, self.schedule_help]),
                                    self.relower_button])
        self.children = [W.VBox([*self.format_pickers.values()]), self.schedule_row]
        # a rebuild_for callable knows its strategy: mark the levels that strategy refuses, and
        # offer the commands its schedule takes
        strategy, program = getattr(rebuild, "strategy", None), getattr(rebuild, "program", None)
        if isinstance(strategy, str) and isinstance(program, str):
            self.mark_for(strategy, program_output(program))
        if isinstance(strategy, str):
            self.offer_commands(strategy, program_kind(program) if program is not None else "index notation")

    def offer_commands(self, strategy: str, kind: str = "index notation") -> None:
        """Offer, under the schedule editor, the commands ``strategy``'s schedule takes for a program
        of ``kind`` (as :func:`compiler.capabilities.capabilities` says): a button per command adding
        it to the editor, and their signatures; a strategy that takes none hides the editor (its text
        stays), and one whose commands apply to other kinds of program only disables it, saying so."""
        import html

        from compiler.capabilities import capabilities
        from compiler.schedule import signature

        caps = capabilities(strategy)
        commands = caps.commands_for(kind)
        only = {name: " and ".join(_PLURALS.get(k, k) for k in PROGRAM_KINDS if caps.why_not_command(name, k) is None)
                for name in caps.schedule_commands if name not in commands}
        buttons = []
        for name in caps.schedule_commands:
            # (a command for other kinds of program: shown disabled, its tooltip saying which, so the row
            # keeps its height beside another column's)
            b = W.Button(description=name, layout=W.Layout(width="auto"), disabled=name in only,
                         tooltip=f"{signature(name)} applies to {only[name]} only" if name in only else
                         f"add {signature(name)}")
            b.add_class("ss-schedule-command")
            b.on_click(lambda _b, name=name: self.add_command(name))
            buttons.append(b)
        self.command_buttons.children = buttons
        if self._wrapped:
            self.wrap_commands()
        self.schedule_help.value = (
            f"<div style='font:12px sans-serif'>the {html.escape(strategy)} strategy's schedule takes "
            + (", ".join(f"<code>{html.escape(signature(name))}</code>" for name in commands) if commands else
               f"no command for {html.escape(kind)}")
            + "".join(f"; <code>{html.escape(signature(name))}</code> applies to {which} only"
                      for name, which in only.items()) + "</div>")
        if commands:
            self.schedule_editor.placeholder = f"one command a line, e.g. {signature(commands[0], editable=True)}"
        elif only:   # (kept in place, so a column beside it stays in line: disabled, saying why)
            self.schedule_editor.placeholder = f"no command of the {strategy} strategy's schedule applies to {kind}"
        self.schedule_editor.disabled = not commands
        self.schedule_row.layout.display = "" if caps.schedule_commands else "none"

    def wrap_commands(self) -> None:
        """Lay the controls out for a narrow column: each format picker's dropdowns wrap (see
        :meth:`FormatPicker.wrap`); the command buttons wrap to more rows at
        their full width (never shrunk to an ellipsis), the editor takes the room left beside
        "re-lower", and "re-lower" goes under the editor when there is none. (A column beside
        another keeps in line with it by sharing its rows: see :class:`~widgets.Compare`.)"""
        for picker in self.format_pickers.values():
            picker.wrap()
        self.children[0].layout.min_width = "0"
        self.command_buttons.layout.flex_flow = "row wrap"
        for b in self.command_buttons.children:
            b.layout.flex = "0 0 auto"
        # (no box wider than the column: a grid's or flex box's item is at least as wide as its
        # widest word unless told it may be narrower)
        self.layout.min_width = self.schedule_row.layout.min_width = "0"
        self.schedule_row.layout.flex_flow = "row wrap"
        self.schedule_row.children[0].layout = W.Layout(flex="1 1 200px", min_width="0", max_width="100%")
        self.schedule_editor.layout.width = "100%"
        self._wrapped = True

    def add_command(self, name: str) -> None:
        """Add the command ``name``, its arguments named, as the schedule editor's last line (for the
        user to fill in).

        >>> c = RebuildControls(None)
        >>> c.add_command("privatize"); c.schedule_editor.value
        'privatize(tensor, copies=4, workspace=True)'
        """
        from compiler.schedule import signature

        text = self.schedule_editor.value.rstrip("\n")
        self.schedule_editor.value = (text + "\n" if text else "") + signature(name, editable=True)

    def mark_for(self, strategy: str, output: str | None = None) -> None:
        """Mark, in every picker, the levels ``strategy`` cannot read (or, in the ``output``
        tensor's picker, assemble), as :func:`compiler.capabilities.capabilities` says."""
        from compiler.capabilities import capabilities

        caps = capabilities(strategy)
        for name, picker in self.format_pickers.items():
            picker.mark(lambda level, out=name == output: caps.why_not(level, output=out))

    def on_session(self, callback: Callable[[Any], Any]) -> None:
        """Call ``callback(session)`` with every session a re-lowering makes."""
        self._callbacks.append(callback)

    def formats(self) -> dict[str, Format]:
        """The formats chosen in the pickers: ``{tensor: Format}``."""
        return {name: p.value for name, p in self.format_pickers.items()}

    def _on_format(self, _fmt) -> None:
        if self.auto_relower:
            self.relower()

    def recipe(self, formats: dict, schedule: str) -> str:
        """Python that recreates the session of ``formats`` and ``schedule`` ("copy as code")."""
        from explorer.rebuild import format_code, initial_format, program_ndims, schedule_code

        rebuild = self.rebuild
        program = getattr(rebuild, "program", None)
        if isinstance(program, str):
            try:
                sched = schedule_code(schedule)
            except Exception:
                sched = repr(schedule)
            # the tensors rebuild_for fixed (by their formats), the checked flag and the options
            # it lowers with belong in the recipe too, or it lowers another kernel
            ndims = program_ndims(program)
            fixed = {k: initial_format(v, ndims.get(k)) for k, v in (getattr(rebuild, "fixed", None) or {}).items()
                     if k not in formats}
            args = "".join(f", {k}={format_code(v) if hasattr(v, 'mode_order') else repr(v)}"
                           for k, v in {**fixed, **formats}.items())
            base = dict(getattr(rebuild, "options", None) or {})
            items = [f"{k!r}: {v!r}" for k, v in base.items() if not (k == "schedule" and sched != "[]")]
            items += [f"'schedule': {sched}"] if sched != "[]" else []
            opts = f", options={{{', '.join(items)}}}" if items else ""
            checked = ", checked=True" if getattr(rebuild, "checked", False) else ""
            return ("import compiler\n"
                    "from compiler.format import Format\n"
                    "from compiler.levels import *\n"
                    "from explorer import explore\n\n"
                    "def build(trace):\n"
                    f"    compiler.lower({program!r}, {rebuild.strategy!r}, trace=trace{checked}{opts}{args})\n\n"
                    "session = explore(build)\n")
        name = getattr(rebuild, "__qualname__", "rebuild")
        return ("from explorer import explore\n"
                f"# {name} is your rebuild(formats, schedule) -> Trace\n"
                f"session = explore(lambda trace: trace.steps.extend("
                f"{name}({formats!r}, {schedule!r}).steps))\n")

    def relower(self):
        """Rebuild with the pickers' formats and the schedule text; returns the new session
        (a lowering error, e.g. a StrategyError from a schedule command that does not apply,
        leaves the session failed at that step, never raises)."""
        from compiler.trace import Trace
        from explorer.session import explore

        if self.rebuild is None:
            raise RuntimeError("nothing to re-lower: no rebuild(formats, schedule) callable was given "
                               "(pass rebuild=..., or use Explorer.for_program / Compare.for_program)")
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

        session = explore(build, recipe=self.recipe(formats, schedule))
        for cb in self._callbacks:
            cb(session)
        return session
