"""ipywidgets UIs over explorer sessions: :class:`Explorer`, :class:`Compare`, :class:`FormatPicker`,
:class:`RebuildControls`."""

from .compare import Compare
from .explorer import Explorer
from .pickers import LEVELS, FormatPicker, RebuildControls

__all__ = ["Compare", "Explorer", "FormatPicker", "LEVELS", "RebuildControls"]
