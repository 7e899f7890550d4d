"""Shared pytest configuration: compiled kernels go to a per-session temporary cache."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def sparsescope_cache_dir(tmp_path_factory):
    """Point SPARSESCOPE_CACHE_DIR at a fresh directory so tests never touch the user's cache."""
    mp = pytest.MonkeyPatch()
    path = tmp_path_factory.mktemp("sparsescope-cache")
    mp.setenv("SPARSESCOPE_CACHE_DIR", str(path))
    # validate every kernel's output tensor, so a strategy bug fails loudly in tests
    mp.setenv("SPARSESCOPE_VALIDATE_OUTPUTS", "1")
    yield path
    mp.undo()
