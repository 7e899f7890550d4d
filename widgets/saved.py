"""What a view shows when it is drawn from a notebook's saved widget state, with no kernel behind it.

ipywidgets draws each disconnected widget with a red broken-link icon in its corner; an Explorer
is some thirty widgets, so a saved tour opened before its cells run was strewn with icons. Inside
sparsescope's views the icons are hidden and one line at the top of the view says, once, what
the state is and what to do. The note is an ``HTML`` widget whose element ipywidgets marks
``jupyter-widgets-disconnected`` like the others: it shows only then, so a live view has no note.

>>> note = saved_view_note()
>>> "ss-saved-note" in note._dom_classes and "run the cell" in note.value
True
"""

from __future__ import annotations

import ipywidgets as W

from explorer.theme import MUTED

#: the roots of sparsescope's views (Explorer, Compare, Playground)
VIEW_CLASSES = ("sparsescope-explorer", "sparsescope-compare", "sparsescope-playground")

_CSS = "".join(
    f".{root} .jupyter-widgets-disconnected::before, .{root}.jupyter-widgets-disconnected::before "
    "{ display: none !important; }" for root in VIEW_CLASSES) + (
    ".ss-saved-note { display: none !important; }"
    ".ss-saved-note.jupyter-widgets-disconnected { display: block !important; }")


def saved_view_note() -> W.HTML:
    """The one-line note a view shows when drawn from saved state (see the module docstring)."""
    note = W.HTML(f"<style>{_CSS}</style><div style='font-size:12px;color:{MUTED};padding:2px 0'>"
                  "A saved view, drawn without its kernel: run the cell to step through it, "
                  "pick a lattice point or looplet, re-lower and time it</div>")
    note.add_class("ss-saved-note")
    return note


__all__ = ["VIEW_CLASSES", "saved_view_note"]
