"""sparsescope's ipywidgets UI over explorer sessions (see issue: the explorer)."""
