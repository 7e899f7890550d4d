"""ipywidgets UIs over explorer sessions: :class:`Explorer`, :class:`Compare`, :class:`FormatPicker`."""

from .explorer import Compare, Explorer
from .pickers import LEVELS, FormatPicker

__all__ = ["Compare", "Explorer", "FormatPicker", "LEVELS"]
