"""Shared pytest configuration: compiled kernels go to a per-run temporary cache."""

import gc
import math
import os
import pathlib
import shutil

import pytest
from hypothesis import settings

from compiler import lowering
from compiler.backend import kernel
from tests.frame_chunks import keep_freed_chunks

ROOT = pathlib.Path(__file__).resolve().parents[1]

# No per-example deadline: a worker of a parallel run shares the cores with another and with the
# C compiler, so a timing limit would fail tests for the machine's load, not for their code.
# Derandomized: every run draws the same examples, so no run passes or fails by the luck of a draw
# (a property test once found a bug "on some draws" only). To hunt for new bugs with fresh draws,
# run with SPARSESCOPE_HYPOTHESIS=explore; pin what it finds with @example.
# The suite's budget (15 minutes on 2 cores) sets how many cases a property test draws: one whose cases
# each lower and build a kernel asks for about half of what it would alone (the 262 of them that took
# 0.3 s or more in a whole run were halved at once, 10,009 -> 4,959 cases, about 190 s of CPU); cases
# that once found a bug are pinned and always run. Of that, the suite's run draws DRAWN_SHARE (below).
settings.register_profile("sparsescope", deadline=None, derandomize=True, database=None)
settings.register_profile("explore", deadline=None)
settings.load_profile(os.environ.get("SPARSESCOPE_HYPOTHESIS", "sparsescope"))


def draw_no_local_constants() -> None:
    """Hypothesis (6.131 on) draws, at about 1 in 20 numbers, a constant found in the source of the
    project's modules *loaded at the time*: which ones a worker has loaded depends on the test files
    it ran before (xdist hands them out as they finish), so a derandomized test drew other examples
    from one run to the next (measured: the same @given test, 200 draws, differs once three compiler
    modules are imported). Its pool is kept empty (Hypothesis's own constants, NaN, inf, 2**63, ...,
    are still drawn), which also saves parsing every module (about 3.5 s of CPU per process). A
    private hook: where it is missing (older Hypothesis, which had no such pool), nothing to do."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:
        return
    if callable(getattr(providers, "_get_local_constants", None)):
        providers._get_local_constants = Constants


draw_no_local_constants()


def register_hypothesis_random_now() -> None:
    """Hypothesis registers its own random generator at the first test it runs in a thread, and checks that
    registration with a full garbage collection and a scan of every object for the generator's referrers: at a
    worker's first property test, after hundreds of files' kernels and traces, that took seconds (7 s of the
    suite's CPU, sampled). Done here, while the process holds little. A private hook, as above: where it is
    missing, Hypothesis registers it when it runs, as before."""
    try:
        from hypothesis.internal.entropy import deterministic_PRNG
    except ImportError:
        return
    with deterministic_PRNG():
        pass


register_hypothesis_random_now()


#: past this resident size, a worker forgets the kernels it lowered and loaded (forget_kernels). Freed, their
#: memory is not given back (Python's arenas stay pinned by the objects that outlive them: 361 arenas of 1 MB,
#: 75 MB of them in use, after one worker's lattice files, caches cleared and collected) but reused by the next
#: files' kernels: the bound is about where a worker's heap stops. At 1200 MB the suite's peak was 5.3 GB; at
#: 400 MB, with the browser files on one worker, 3.9 GB, in no more time (538 s against 568-609 s)
KERNELS_KEPT_UP_TO = 400 * 2 ** 20


@pytest.fixture(autouse=True, scope="module")
def forget_kernels():
    """After a test file, where this process holds more than KERNELS_KEPT_UP_TO, forget the kernels
    lowered and loaded in it (lower()'s cache and the backend's memory cache; the disk cache stays, so
    a kernel met again is loaded, not built). A worker kept every kernel and trace of its run, its
    memory growing to the end (one 3.8 GB, two 1.6-1.9 GB each halfway); past the bound only, so that
    later files still find the kernels earlier ones lowered (lowering is most of the suite's time)."""
    yield
    try:
        with open("/proc/self/statm") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        resident = KERNELS_KEPT_UP_TO + 1   # (no /proc: forget them anyway)
    if resident > KERNELS_KEPT_UP_TO:
        lowering.clear_cache()
        kernel.clear_memory_cache()


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
    # Build at -O0, not the shipped -O3: the suite builds thousands of kernels and times none, and
    # GCC is about half of its CPU time (-O1 with the vectorizer took 1.4x -O0's time on the shape
    # operators' kernels, -O3 about 2.5x -O1 on the larger ones). The same C; -fwrapv defines what
    # the optimizer could otherwise exploit, and tests/compiler/backend/test_shipped_flags.py builds
    # a kernel of each kind at the shipped flags.
    if not os.environ.get("SPARSESCOPE_OPT"):
        mp.setenv("SPARSESCOPE_OPT", "-O0")
    # ...and built by the Tiny C Compiler where it takes the C (./dev test installs it): GCC's -O0 build
    # cost about 65 ms a kernel, a quarter of the suite's CPU; TCC's a tenth of that. GCC still builds
    # what TCC refuses, every kernel with threads or the sanitizer and the shipped-flags tests' kernels;
    # the C emitter refuses what GCC alone would see (a branch out of a SIMD loop).
    if os.environ.get("SPARSESCOPE_QUICK_CC") is None and shutil.which("tcc"):
        mp.setenv("SPARSESCOPE_QUICK_CC", "tcc")
    yield path
    mp.undo()


# The longest files first, longest first (per-file times of a whole run on 2 cores): ./dev test
# runs pytest-xdist with --no-loadscope-reorder, so files are handed to the workers in this order
# (by default xdist hands out the files with the most tests first, which left the few-test but
# long files, the Binder and sanitizer runs, for last: one worker ran them while the other idled)
LONGEST_FIRST = ("test_sanitize.py", "test_peers_pydata_elemwise.py", "test_lattice_output_nestings.py",
                 "test_binder.py", "test_seqemit.py", "test_lattice_output_formats.py", "test_lattice_precompute.py",
                 "test_peers_taco_lower.py", "test_lattice_kernels.py",
                 "test_dtypes.py", "test_reductions.py", "test_seq_nestings.py",
                 "test_lattice_parallel.py", "test_output_formats.py", "test_elementwise.py",
                 "test_shape_looplets.py", "test_lattice_derived.py", "test_schedule_compose.py",
                 "test_lattice_band_block.py", "test_looplets_wrappers.py", "test_shapeops.py",
                 "test_lattice_precompute_sequences.py", "test_fastcall_outputs.py")


#: the folder whose tests drive Chromium and Jupyter servers (tests/widgets/conftest.py's session fixtures,
#: which live until their process ends): its files are handed out as one unit, so one worker starts them
BROWSER_FOLDER = "tests/widgets/"


def pytest_xdist_make_scheduler(config, log):
    """xdist's --dist loadfile, BROWSER_FOLDER's files one unit (two browsers, JupyterLabs and their kernels
    beside two workers' heaps took the suite's memory past 4 GB); the unit is where its first file is in
    the order pytest_collection_modifyitems gives."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserFilesTogether(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            # (the method xdist's own schedulers override to group tests: loadgroup's)
            return BROWSER_FOLDER if scope.startswith(BROWSER_FOLDER) else scope

    return BrowserFilesTogether(config, log)


def pytest_configure(config):
    # Python's collector ran about 800 times in a 25 s test file and took 2.1-2.5 s CPU of it
    # (measured with gc.callbacks): each young collection walks the lowering's many fresh IR nodes,
    # and an old one every module, array and kernel loaded. Collect young objects less often (the
    # suite's memory stays within a few percent) and leave what the imports made out of it.
    gc.set_threshold(50_000, 20, 100)
    gc.freeze()
    keep_freed_chunks()   # (CPython's frame chunks mapped and unmapped by the thousand: see tests/frame_chunks.py)


def pytest_collection_finish(session):
    gc.freeze()   # (the test modules, their data and hypothesis' strategies: alive to the end)


def pytest_sessionfinish(session):
    # pytest collects the whole heap twice as it ends (for finalizers' exceptions), and a worker's
    # heap then holds every kernel, trace and cache of its run: py-spy found about 30 s there, of an
    # 18-minute run of 1,066 tests in one process. Frozen, the heap is left for the exit to free.
    gc.freeze()


#: the share of its ``max_examples`` a property test draws in the suite's own run (at least DRAWN_AT_LEAST, and every
#: pinned @example runs): a run on 2 cores was CPU-bound throughout (33 idle core-seconds of 1,850, a 928 s run), and
#: the property tests' draws were 284 of the 1,546 core-seconds its tests took; the explore profile draws them all.
#: 0.7 of them (5,978 cases) took a 963 s run, CPU-bound (97% of both cores busy, sampled from /proc/stat each second);
#: 0.5 (4,277) took tests/compiler/looplets from 151 to 135 s on 2 cores; 0.4 draws 3,448
DRAWN_SHARE = 0.4
DRAWN_AT_LEAST = 3


def draw_fewer_examples(items) -> None:
    """Scale each property test's ``max_examples`` by :data:`DRAWN_SHARE` (rounded up). Hypothesis keeps a test's
    settings on it and reads them as the test runs (tests/compiler/backend/property_run.py caps them the same way)."""
    if os.environ.get("SPARSESCOPE_HYPOTHESIS") == "explore":
        return
    done = set()
    for item in items:
        test = getattr(item, "obj", None)
        parent = getattr(test, "_hypothesis_internal_use_settings", None)
        if parent is None or not getattr(test, "is_hypothesis_test", False) or id(test) in done:
            continue
        done.add(id(test))   # (a parametrized test's items share one function)
        fewer = max(DRAWN_AT_LEAST, math.ceil(parent.max_examples * DRAWN_SHARE))
        if fewer < parent.max_examples:
            test._hypothesis_internal_use_settings = settings(parent, max_examples=fewer)


def pytest_collection_modifyitems(items):
    draw_fewer_examples(items)
    # then the notebooks (nbval: 4-15 s each, one cell after another), which the collection gives
    # last, after hundreds of short files: one started as the other worker ran out of files left
    # that worker idle for most of its time; the rest in the collection's order
    # The browser folder's unit goes first: Chromium, JupyterLab and their kernels (about 1.5 GB) then run
    # beside two young workers' heaps, and stop before those grow (a worker's holds 0.7-1.5 GB later on); run
    # eighth, at 130-400 s, they made the suite's memory peak, 3.87-3.97 GB of the 4 GB.
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    rank.update({".ipynb": len(rank)})
    browser = (ROOT / BROWSER_FOLDER).resolve()
    items.sort(key=lambda item: -1 if browser in item.path.parents else
               rank.get(item.path.name, rank.get(item.path.suffix, len(rank) + 1)))
