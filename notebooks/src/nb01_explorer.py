"""01-explorer: the explorer in depth (sessions, the UI, failures, export)."""

NAME = "01-explorer.ipynb"
# (its Explorers are drawn from the stored state when opened, before any cell runs)
WIDGET_STATE = True

CELLS = [
    ("md", """# The explorer: stepping through a lowering

Every lowering records a **trace**: the program before and after each stage, the artifacts the
stage built (fiber trees, iteration lattices, looplet nests, the C source) and every rewrite.
The `explorer` package turns a trace into a **session** you can step through, renders each step
to HTML and SVG, times the kernel, and exports the whole trace to one offline HTML page; the
`widgets.Explorer` puts all of it in one notebook UI.

Here the trace is a small CSR SpMV recorded by hand (`explorer.examples`): the parse of
`y[i] = A[i, j] * x[j]`, the operands' fiber trees, the imperative IR and the C it compiles to.
The trace of a real lowering, `compiler.lower(..., strategy="lattice" or "looplets").trace`,
opens the same way (the tour steps through both)."""),
    ("code", """import numpy as np
from IPython.display import HTML, display

from explorer import compare, diff_steps, explore, export_html, render_step
from explorer.examples import build_broken, spmv_example
from widgets import Explorer

ex = spmv_example(n=2000, density=0.01, seed=1)   # traced and compiled
assert ex.check()                                 # the kernel agrees with the dense reference"""),
    ("md", """## A session

A session holds the steps, a current step and filters (by stage, by rewrite rule, or hiding
steps that changed nothing). `stages()` gives each step's stage, so `stages().index("emit-c")` is
a step to `goto`; a stage may repeat (a lattice per index), `stage_names()` lists each once and
`indices(name)` gives the steps of one."""),
    ("code", """# NBVAL_CHECK_OUTPUT
session = explore(ex.trace, name="spmv")
print(session.stages())
print(session.filter(hide_unchanged=True).visible)
_ = session.clear_filters()"""),
    ("md", """## The explorer UI

Step with the slider, the buttons or *play*; filter by stage; the panes show the program at this
step, the diff from the previous step, the drawing (the fiber trees here) and the C. A drawing's
title has zoom controls (−, the level, +, *fit*, *100%*): zoomed past its pane it scrolls, and
the next step's drawing of the same kind keeps the level. *time it*
runs the kernel on the sample inputs against scipy and numpy, checking the results agree."""),
    ("code", """Explorer(session, run=ex.run(), baselines=ex.baselines(), check=np.allclose)"""),
    ("md", """## The same, without widgets

Everything the UI shows comes from the `explorer` package, so it also works in a script or a test:
the diff between any two steps, one step as HTML, timing with a small plot. A step shown with
`linked=True` carries the kernel's C and links its parts as the exported page does: click a
coloured node of its drawing and that node's C lines are outlined (click elsewhere to let go).
The trace recorded by hand above says nothing of where its C came from, so the linked step here
is the parse of a real lowering of the same SpMV: click a node of its expression tree."""),
    ("code", """# NBVAL_CHECK_OUTPUT
print(diff_steps(session, 0, 2))"""),
    ("code", """import compiler as ss

lowered = explore(ss.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense").trace)
display(HTML(render_step(lowered.step(0), linked=True)))"""),
    ("code", """result = compare(ex.run(), ex.baselines(), repeats=5, name="sparsescope")
display(HTML(result.html()))"""),
    ("md", """## When lowering fails

A build that raises keeps the steps recorded so far; the session opens at the failing step with
the error, which is how the author of a new level format sees where lowering stopped."""),
    ("code", """# NBVAL_CHECK_OUTPUT
broken = explore(build_broken)
print(broken.error)
print(broken.stages(), "-> opens at step", broken.current)"""),
    ("code", """Explorer(broken)"""),
    ("md", """## A page to share

`export_html` writes the whole trace as one self-contained page (step with the arrow keys);
`python -m explorer trace saved.json --html out.html` does the same from the command line."""),
    ("code", """# NBVAL_CHECK_OUTPUT
import pathlib, tempfile

page = export_html(session, pathlib.Path(tempfile.mkdtemp()) / "spmv.html")
print(page.count('<section class="step"'), "steps;", "offline:", "http" not in page)"""),
]
