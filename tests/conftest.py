"""Shared pytest configuration: compiled kernels go to a per-session temporary cache."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def sparsescope_cache_dir(tmp_path_factory):
    """Point SPARSESCOPE_CACHE_DIR at a fresh directory so tests never touch the user's cache."""
    mp = pytest.MonkeyPatch()
    path = tmp_path_factory.mktemp("sparsescope-cache")
    mp.setenv("SPARSESCOPE_CACHE_DIR", str(path))
    yield path
    mp.undo()
