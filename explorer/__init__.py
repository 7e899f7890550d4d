"""sparsescope's explorer: renders traces (SVG, HTML, text) without widgets."""

from .render import RenderError, dot_to_svg

__all__ = ["RenderError", "dot_to_svg"]
