"""sparsescope's ipywidgets UI over explorer sessions: :class:`Explorer` and :class:`Compare`."""

from .explorer import FORMAT_OPTIONS, Compare, Explorer

__all__ = ["Compare", "Explorer", "FORMAT_OPTIONS"]
