"""A pytest plugin for a short, repeatable run of the property tests (the sanitized run's, in
test_sanitize.py). ``--capped-examples N``: every hypothesis test runs at most its first N examples,
derandomized (the same on every run: no run may pass or fail on the draw), with no example database
and no deadline; its ``@example`` cases still run. ``--pinned-examples-first``: a test with
``@example`` cases runs those alone (the cases that once found bugs; its drawn examples are the
suite's own run's), one without runs its first N; ``--pinned-examples-cap K`` keeps a test's first K
``@example`` cases (as written, top down), its others the suite's own run's. ``--property-tests-only``:
only hypothesis tests and the fuzzing rounds (tests marked ``fuzz``) are run.

    python -m pytest -p tests.compiler.backend.property_run --capped-examples 3 --property-tests-only tests/compiler/lattice
"""

import hypothesis
from hypothesis import Phase, settings

# hypothesis keeps a test's @settings here; a profile cannot lower a count a test sets itself
_SETTINGS = "_hypothesis_internal_use_settings"


def pytest_addoption(parser):
    group = parser.getgroup("property_run", "short, repeatable runs of the property tests")
    group.addoption("--capped-examples", type=int, default=None,
                    help="run each hypothesis test's first N derandomized examples only")
    group.addoption("--pinned-examples-first", action="store_true",
                    help="with --capped-examples: a test with @example cases runs those alone, one without "
                         "its first N derandomized examples")
    group.addoption("--pinned-examples-cap", type=int, default=None,
                    help="with --pinned-examples-first: run at most a test's first K @example cases (as written)")
    group.addoption("--property-tests-only", action="store_true",
                    help="run only hypothesis tests and fuzzing rounds (marked fuzz)")


def _is_property_test(item) -> bool:
    return getattr(getattr(item, "obj", None), "is_hypothesis_test", False)


def pytest_collection_modifyitems(config, items):
    if config.getoption("--property-tests-only"):
        kept = [item for item in items if _is_property_test(item) or item.get_closest_marker("fuzz")]
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
    cap = config.getoption("--capped-examples")
    if cap is None:
        return
    pinned_first = config.getoption("--pinned-examples-first")
    pinned_cap = config.getoption("--pinned-examples-cap")
    for item in items:
        if not _is_property_test(item):
            continue
        test = item.obj
        if not hasattr(test, _SETTINGS):
            raise RuntimeError(f"--capped-examples: hypothesis {hypothesis.__version__} no longer keeps a "
                               f"test's settings in {_SETTINGS}; update this plugin")
        parent = getattr(test, _SETTINGS)
        # (the explicit phase alone runs the @example cases and draws nothing)
        pinned = getattr(test, "hypothesis_explicit_examples", ())
        drawn = {"phases": (Phase.explicit,)} if pinned_first and pinned else {}
        if pinned_first and pinned_cap is not None and len(pinned) > pinned_cap:
            # (each @example appends itself as the decorators apply, bottom up; hypothesis runs them reversed)
            test.hypothesis_explicit_examples = list(pinned[-pinned_cap:])
        setattr(test, _SETTINGS, settings(parent, max_examples=min(cap, parent.max_examples),
                                          derandomize=True, database=None, deadline=None, **drawn))
