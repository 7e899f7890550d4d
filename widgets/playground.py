"""A playground in the TACO web tool's spirit: type index notation, pick a strategy and each
tensor's format, and see the kernel and what changed.

:class:`Playground` shows an expression box (a parse error shows under it, as the parser words
it, with a caret; the last kernel stays), a strategy toggle, a format picker per tensor (the
output's too) whose level options the chosen strategy cannot read or assemble are marked, as
:func:`compiler.capabilities.capabilities` says, the schedule box with the commands the
strategy's schedule takes (the lattice's TACO commands, the looplets' privatize), an :class:`~widgets.Explorer` over the lowering, and "what
changed" (:mod:`explorer.whatchanged`) between the previous lowering and this one.

>>> p = Playground("y[i] = A[i, j] * x[j]", A="csr", x="dense")      # doctest: +SKIP
>>> p.strategy.value = "looplets"; p.expression.value = "y[i] = A[i, j] * x[j] + z[i]"  # doctest: +SKIP
"""

from __future__ import annotations

import html as _html
from typing import Any

import ipywidgets as W

from compiler.capabilities import capabilities
from compiler.errors import ParseError
from compiler.format import Format
from compiler.lowering import strategies
from compiler.notation import parse
from compiler.trace import Trace
from explorer.rebuild import initial_format, program_ndims, rebuild_for
from explorer.session import Session
from explorer.theme import MUTED
from explorer.whatchanged import what_changed

from .explorer import Explorer, pane, titled
from .pickers import RebuildControls, program_output

__all__ = ["Playground"]


class Playground(W.VBox):
    """``Playground(program, strategy="lattice", schedule="", **tensors)``: tensors as for
    ``compiler.lower`` (formats, shorthands, Tensors); a tensor not given starts dense."""

    def __init__(self, program: str, strategy: str = "lattice", *, schedule: str = "", **tensors: Any):
        super().__init__()
        capabilities(strategy)   # an unknown strategy: a StrategyError naming the known ones
        self.expression = W.Text(value=program, description="expression", continuous_update=False,
                                 layout=W.Layout(width="520px"))
        self.parse_error = W.HTML(layout=W.Layout(display="none"))
        self.strategy = W.ToggleButtons(options=strategies(), value=strategy, description="strategy",
                                        tooltips=[f"lower by the {s} strategy" for s in strategies()])
        self.marks = W.HTML()
        self.controls_box = W.VBox()
        self.explorer = Explorer(Trace())
        self.changed_pane = pane()
        for widget, cls in ((self.expression, "ss-expression"), (self.parse_error, "ss-parse-error"),
                            (self.strategy, "ss-strategy"), (self.marks, "ss-format-marks"),
                            (self.changed_pane, "ss-what-changed")):
            widget.add_class(cls)
        self.add_class("sparsescope-playground")
        #: the program the pickers and the explorer show (the box may hold one that does not parse)
        self.program = program
        self.controls: RebuildControls | None = None
        self.previous: tuple[str, Session] | None = None
        self._tensors = dict(tensors)
        # each strategy's schedule text, kept while another strategy is shown (their commands differ)
        self._schedules = {strategy: schedule}
        self.children = [W.VBox([self.expression, self.parse_error]), self.strategy, self.controls_box,
                         self.marks, self.explorer, titled("what changed", self.changed_pane, across=False)]
        self._build(program, {})
        self.expression.observe(self._on_expression, names="value")
        self.strategy.observe(self._on_strategy, names="value")
        self.relower()

    # --- controls ---------------------------------------------------------------------------
    def _build(self, program: str, formats: dict[str, Format]) -> None:
        """Pickers for every tensor of ``program`` (keeping ``formats`` where a tensor keeps its
        order), marked for the strategy, and the schedule box with the strategy's own text."""
        ndims = program_ndims(program)
        chosen = {}
        for name, n in ndims.items():
            old = formats.get(name)
            if old is not None and old.ndim == n:
                chosen[name] = old
            else:
                chosen[name] = initial_format(self._tensors.get(name, "dense"), n)
        if self.controls is not None:
            self._schedules[self.controls.rebuild.strategy] = self.controls.schedule_editor.value
        # (the controls offer the commands the strategy's schedule takes, and hide the box without any)
        controls = RebuildControls(rebuild_for(program, self.strategy.value), chosen,
                                   self._schedules.get(self.strategy.value, ""), ndims)
        output = program_output(program)   # (the controls marked the pickers for the strategy)
        for picker in controls.format_pickers.values():
            picker.on_change(lambda _fmt: self._show_marks())
        controls.on_session(self._on_session)
        self.controls, self.program, self._output = controls, program, output
        self.controls_box.children = [controls]
        self._show_marks()

    def _show_marks(self) -> None:
        """Say what the strategy reads and assembles, and which chosen level it refuses."""
        caps = capabilities(self.strategy.value)
        # (the playground's program is index notation: a command for loop programs only is none of its)
        lines = [f"the {caps.strategy} strategy reads {', '.join(caps.reads)}; assembles outputs of "
                 f"{', '.join(caps.assembles)}" + ("" if caps.commands_for("index notation") else
                                                   "; takes no schedule for index notation")]
        for name, fmt in self.formats().items():
            for k, lvl in enumerate(fmt.levels):
                why = caps.why_not(lvl.name, output=name == self._output)
                if why:
                    lines.append(f"<b>{_html.escape(name)}</b> level {k} ({lvl.name}): {why}")
        self.marks.value = (f"<div style='font:12px sans-serif;color:{MUTED}'>"
                            + "<br>".join(lines) + "</div>")

    def formats(self) -> dict[str, Format]:
        """The formats in the pickers: ``{tensor: Format}``."""
        return self.controls.formats() if self.controls is not None else {}

    @property
    def format_pickers(self):
        return self.controls.format_pickers

    @property
    def schedule_editor(self) -> W.Textarea:
        return self.controls.schedule_editor

    @property
    def session(self) -> Session:
        return self.explorer.session

    # --- events -----------------------------------------------------------------------------
    def _on_expression(self, change) -> None:
        self.set_expression(change["new"])

    def set_expression(self, text: str) -> bool:
        """Lower ``text`` if it parses (True); else show the parse error and keep the kernel."""
        try:
            parse(text)
        except ParseError as e:
            self.parse_error.value = (f"<pre class='ss-parse-message' style='margin:2px 0;color:var(--jp-error-color1, #b00020);"
                                      f"font:12px monospace'>{_html.escape(str(e))}</pre>")
            self.parse_error.layout.display = ""
            return False
        self.parse_error.value, self.parse_error.layout.display = "", "none"
        self._build(text, self.formats())
        self.relower()
        return True

    def _on_strategy(self, _change) -> None:
        self._build(self.program, self.formats())
        self.relower()

    def relower(self) -> Session:
        """Lower the program with the pickers' formats (and the schedule) and show it."""
        return self.controls.relower()

    def _label(self) -> str:
        fmts = ", ".join(f"{n} {f.shorthand or '/'.join(l.name for l in f.levels) or 'scalar'}" for n, f in self.formats().items())
        return f"{self.strategy.value}: {self.program} ({fmts})"

    def _on_session(self, session: Session) -> None:
        self.explorer.set_session(session)
        label = self._label()
        if self.previous is None:
            self.changed_pane.value = (f"<i style='color:{MUTED}'>change the expression, the strategy or a "
                                       f"format to see what changes</i>")
        else:
            old_label, old = self.previous
            self.changed_pane.value = what_changed(old, session, old_label, label).html()
        self.previous = (label, session)
