"""sparsescope's explorer: sessions over traces, renderers (SVG, HTML, text), timing, HTML
export and the command line (``python -m explorer``), all without widgets.

>>> from explorer.examples import build_spmv
>>> session = explore(build_spmv)
>>> "<svg" in render_step(session.step(1))
True
"""

from .export import export_html
from .rebuild import parse_schedule, rebuild_for
from .render import RenderError, dot_to_svg
from .renderers import (Diff, color_for, diff_steps, render_artifact, render_c, render_code, render_diff,
                        render_dot, render_step)
from .session import Session, StepView, explore
from .timing import Comparison, TimingStats, compare, time_callable

__all__ = [
    "Comparison", "Diff", "RenderError", "Session", "StepView", "TimingStats", "color_for",
    "compare", "diff_steps", "dot_to_svg", "explore", "export_html", "parse_schedule", "rebuild_for",
    "render_artifact", "render_c",
    "render_code", "render_diff", "render_dot", "render_step", "time_callable",
]
