"""ipywidgets UIs over explorer sessions: :class:`Explorer`, :class:`Compare`, :class:`FormatPicker`,
:class:`RebuildControls`, :class:`Playground`."""

from .compare import Compare
from .explorer import Explorer
from .pickers import LEVELS, FormatPicker, RebuildControls
from .playground import Playground

__all__ = ["Compare", "Explorer", "FormatPicker", "LEVELS", "Playground", "RebuildControls"]
