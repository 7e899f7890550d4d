"""How responsive the explorer is on the tour's kernels (issue 27's targets: redrawing a step
under 0.3 s, re-lowering after a format change under 1 s). Printed, never asserted.

* Redrawing a step: every step of the tour's views (the Explorer over the lattice and over the
  looplet lowering of CSR SpMV on its 2000 x 2000 matrix, Compare's stage slider over both, and
  the "try other formats" Explorer after choosing dcsr), first as a person meets each step (the
  panes rendered: program, diff, drawings through Graphviz, C) and then again (the per-step
  cache). This is the kernel's side of a click: the browser's round trip (the widget messages and
  the page's own layout) is what the browser test logs ("tour: redrawing a step in the browser").
* Re-lowering after a format change: ``Explorer.for_program`` and ``Playground`` on the tour's
  SpMV, by each strategy, choosing another preset for ``A`` (csr -> dcsr -> csc -> csr -> dcsr):
  lowering, compiling the C and redrawing. "cold" is a format whose kernel was never compiled
  (a fresh kernel cache: the C compiler runs), "warm" one compiled before in this process.
  Each re-lowered kernel is then called on the tour's data and checked against scipy.

    .venv/bin/python benchmarks/bench_explorer.py            # both parts, 3 passes each
    .venv/bin/python benchmarks/bench_explorer.py --quick    # one pass, the tour's matrix
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

SPMV = "y[i] = A[i, j] * x[j]"
REDRAW_TARGET, RELOWER_TARGET = 0.3, 1.0
#: the presets chosen for A, in order, after the first lowering (csr)
CHANGES = ("dcsr", "csc", "csr", "dcsr")


@dataclass
class Redraws:
    """The seconds each step of one view took to draw: the first time and again."""

    view: str
    stages: list[str]
    first: list[float]
    again: list[float]

    def line(self) -> str:
        slowest = max(range(len(self.first)), key=self.first.__getitem__)
        over = "" if max(self.first) < REDRAW_TARGET else "   over the target"
        return (f"{self.view:<34} {len(self.first):>5} {ms(statistics.median(self.first)):>10} "
                f"{ms(self.first[slowest]):>10} {self.stages[slowest]:<16} {ms(max(self.again)):>9}{over}")


@dataclass
class Relower:
    """One re-lowering: which view and strategy, the change, cold or warm, seconds, checked."""

    view: str
    strategy: str
    change: str
    cold: bool
    seconds: float

    def line(self) -> str:
        over = "" if self.seconds < RELOWER_TARGET else "   over the target"
        return (f"{self.view:<22} {self.strategy:<9} {self.change:<14} {'cold' if self.cold else 'warm':<5} "
                f"{self.seconds:8.3f} s{over}")


@dataclass
class Report:
    redraws: list[Redraws] = field(default_factory=list)
    relowers: list[Relower] = field(default_factory=list)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def timed(action) -> float:
    t0 = time.perf_counter()
    action()
    return time.perf_counter() - t0


def tour_data(n: int = 2000, density: float = 0.01):
    """The tour's matrix and vector (section 3): scipy's random CSR and numpy's random x."""
    S = sp.random(n, n, density=density, format="csr", random_state=1)
    x = np.random.default_rng(0).random(n)
    return S, x


def explorer_redraws(view: str, explorer) -> Redraws:
    """Every visible step of ``explorer``: drawn the first time (step 0 was drawn when the
    Explorer opened, as :meth:`widgets.Explorer.redraw` recorded), then again, backwards."""
    session = explorer.session
    steps = list(session.visible)
    first = [explorer.redraw_times[-1] if explorer.index == steps[0] else timed(lambda: explorer.goto(steps[0]))]
    first += [timed(lambda i=i: explorer.goto(i)) for i in steps[1:]]
    again = [timed(lambda i=i: explorer.goto(i)) for i in reversed(steps)]
    for i in steps:   # what was drawn is the step's: its stage heads the panes
        explorer.goto(i)
        if session.steps[i].stage not in explorer.header.value:
            raise AssertionError(f"{view}: step {i} drew {explorer.header.value[:80]!r}")
    return Redraws(view, [session.steps[i].stage for i in steps], first, again[::-1])


def compare_redraws(view: str, compare) -> Redraws:
    """Every station of Compare's stage slider (both columns redrawn), then again, backwards."""
    top = compare.stage_slider.max
    stations = list(range(top + 1))

    def to(k):
        compare.stage_slider.value = k

    first = [timed(lambda k=k: to(k)) for k in stations]
    again = [timed(lambda k=k: to(k)) for k in reversed(stations)]
    stages = []
    for k in stations:
        st = compare.stations[k]
        stages.append(st.key or compare.sessions[0].steps[st.a].stage)
    return Redraws(view, stages, first, again[::-1])


def check_kernel(strategy: str, formats: dict, S, x) -> None:
    """The kernel the pickers chose, called on the tour's data, against scipy."""
    import compiler as ss

    A = ss.Tensor.from_scipy(S, name="A").asformat(formats["A"])
    y = ss.lower(SPMV, strategy, A=A, x=x)(A=A, x=x).to_numpy()
    if not np.allclose(y, S @ x):
        raise AssertionError(f"{strategy}, A as {formats['A']}: the kernel disagrees with scipy")


def relowers(view: str, make, strategy: str, S, x, seen: set) -> list[Relower]:
    """Open ``make(strategy)`` (an Explorer.for_program or a Playground over SpMV with A as csr)
    and choose each preset of :data:`CHANGES` for A in turn; each change is timed from the
    menu's new value until the panes are redrawn."""
    out = []
    opened = []
    t = timed(lambda: opened.append(make(strategy)))
    widget = opened[0]
    out.append(Relower(view, strategy, "open (csr)", (strategy, "csr") not in seen, t))
    seen.add((strategy, "csr"))
    before = "csr"
    for preset in CHANGES:
        cold = (strategy, preset) not in seen
        picker = widget.format_pickers["A"]
        t = timed(lambda: setattr(picker.preset, "value", preset))
        session = widget.session
        if session.error or picker.preset.value != preset:
            raise AssertionError(f"{view} ({strategy}): choosing {preset} did not lower: {session.error}")
        check_kernel(strategy, widget.formats(), S, x)
        out.append(Relower(view, strategy, f"{before} -> {preset}", cold, t))
        seen.add((strategy, preset))
        before = preset
    return out


def main(argv=None) -> Report:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one pass of each part")
    ap.add_argument("--passes", type=int, default=None, help="passes of each part (default 3, 1 with --quick)")
    ap.add_argument("--n", type=int, default=2000, help="the matrix's order (the tour's: 2000)")
    args = ap.parse_args(argv)
    passes = args.passes or (1 if args.quick else 3)
    # a fresh kernel cache, so that "cold" re-lowerings run the C compiler
    os.environ["SPARSESCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="sparsescope-bench-explorer-")

    import compiler as ss
    from compiler.backend import clear_memory_cache
    from widgets import Compare, Explorer, Playground

    S, x = tour_data(args.n)
    A = ss.Tensor.from_scipy(S, name="A")
    by_lattice = ss.lower(SPMV, strategy="lattice", A=A, x=x)
    by_looplets = ss.lower(SPMV, strategy="looplets", A=A, x=x)
    for kernel in (by_lattice, by_looplets):
        if not np.allclose(kernel(A=A, x=x).to_numpy(), S @ x):
            raise AssertionError(f"the tour's {kernel.strategy} kernel disagrees with scipy")
    report = Report()

    print(f"redrawing a step (target < {REDRAW_TARGET} s), the tour's views on its {args.n} x {args.n} CSR SpMV;")
    print("the kernel's side (the panes rendered and set); the browser's round trip is in the browser test's log")
    print(f"{'view':<34} {'steps':>5} {'median':>10} {'slowest':>10} {'(stage)':<16} {'again max':>9}")
    for _ in range(passes):
        for make in (lambda: explorer_redraws("Explorer (lattice)", Explorer(by_lattice)),
                     lambda: explorer_redraws("Explorer (looplets)", Explorer(by_looplets)),
                     lambda: compare_redraws("Compare (stage slider)",
                                             Compare(by_lattice, by_looplets, labels=("lattice", "looplets"))),
                     lambda: explorer_redraws("Explorer.for_program, dcsr",
                                              Explorer.for_program(SPMV, "lattice", A="dcsr", x="dense"))):
            r = make()
            report.redraws.append(r)
            print(r.line())

    print(f"\nre-lowering after a format change (target < {RELOWER_TARGET} s): lower, compile the C, redraw;")
    print("cold: that format's kernel never compiled (a fresh cache), warm: compiled before in this run")
    for _ in range(passes):
        os.environ["SPARSESCOPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="sparsescope-bench-explorer-")
        clear_memory_cache()
        seen: set = set()
        for strategy in ("lattice", "looplets"):
            for view, make in (("Explorer.for_program", lambda st: Explorer.for_program(SPMV, st, A="csr", x="dense")),
                               ("Playground", lambda st: Playground(SPMV, st, A="csr", x="dense"))):
                for r in relowers(view, make, strategy, S, x, seen):
                    report.relowers.append(r)
                    print(r.line())
    return report


if __name__ == "__main__":
    main()
