"""Shared pytest configuration: compiled kernels go to a per-run temporary cache."""

import os

import pytest
from hypothesis import settings

# No per-example deadline: a worker of a parallel run shares the cores with another and with the
# C compiler, so a timing limit would fail tests for the machine's load, not for their code.
# Derandomized: every run draws the same examples, so no run passes or fails by the luck of a draw
# (a property test once found a bug "on some draws" only). To hunt for new bugs with fresh draws,
# run with SPARSESCOPE_HYPOTHESIS=explore; pin what it finds with @example.
settings.register_profile("sparsescope", deadline=None, derandomize=True, database=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("SPARSESCOPE_HYPOTHESIS", "sparsescope"))


@pytest.fixture(autouse=True, scope="session")
def sparsescope_cache_dir(tmp_path_factory):
    """Point SPARSESCOPE_CACHE_DIR at a fresh directory so tests never touch the user's cache."""
    mp = pytest.MonkeyPatch()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # pytest-xdist's workers share one cache, so a kernel compiled by one is loaded by the
        # others (the build renames each library into place whole: no worker sees half of one)
        path = tmp_path_factory.getbasetemp().parent / "sparsescope-cache"
        path.mkdir(exist_ok=True)
    else:
        path = tmp_path_factory.mktemp("sparsescope-cache")
    mp.setenv("SPARSESCOPE_CACHE_DIR", str(path))
    # validate every kernel's output tensor, so a strategy bug fails loudly in tests
    mp.setenv("SPARSESCOPE_VALIDATE_OUTPUTS", "1")
    yield path
    mp.undo()


# The longest file first: under pytest-xdist (``./dev test`` runs a worker per core) the other
# workers take the rest meanwhile, instead of one worker starting it when the others are done.
LONGEST_FIRST = ("test_binder.py", "test_sanitize.py", "test_morphology.py", "test_widgets_browser.py",
                 "test_schedule_compose.py", "test_looplets_gallop.py")


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.path.name not in LONGEST_FIRST)
