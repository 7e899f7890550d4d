"""Write the course notebooks from the cell lists below (the .ipynb files are generated).

Run ``python notebooks/make_notebooks.py`` after editing, then execute them to store outputs
(``jupyter nbconvert --to notebook --execute --inplace notebooks/*.ipynb``). Keeping the source
here makes review and diffs readable; the test suite runs the .ipynb files with nbval.
"""

from __future__ import annotations

import pathlib

import nbformat

HERE = pathlib.Path(__file__).parent

TOUR = [
    ("md", """# A tour of sparsescope

sparsescope is a sparse tensor compiler that shows every step of its work. This notebook tours
the foundation every lowering stands on:

1. **tensors** stored as trees of *levels* (the fiber trees of the TACO and Finch papers), with any
   fill value;
2. **index notation** such as `y[i] += A[i, j] * x[j]` and the dense *reference evaluator* that
   every compiled kernel is checked against;
3. the **imperative IR**, the readable **C** it becomes, and how fast that C runs next to scipy;
4. the **trace** that records every step, which the explorer draws."""),
    ("code", """import numpy as np
import scipy.sparse as sp
from IPython.display import SVG, display

import compiler as ss
from explorer import dot_to_svg"""),
    ("md", """## 1. Tensors are trees of levels

A CSR matrix is a `Dense` level of rows over a `SparseList` level of columns, with the values in an
`Element` leaf that also holds the **fill value**: the value of every entry that is not stored."""),
    ("code", """dense = np.array([[0, 1.5, 0, 0],
                  [0, 0,   0, 0],
                  [2, 0,   0, 3]])
A = ss.Tensor.from_numpy(dense, ss.csr(), name="A")
A"""),
    ("code", """# NBVAL_CHECK_OUTPUT
print(A.fiber_tree_text())"""),
    ("code", """display(SVG(dot_to_svg(A.fiber_tree_dot())))"""),
    ("md", """The same matrix in other formats: CSC stores columns first (`mode_order=(1, 0)`), DCSR
compresses the rows too, so the empty row 1 disappears from the tree."""),
    ("code", """for fmt in ["csc", "dcsr", "coo"]:
    T = A.asformat(fmt)
    assert (T.to_numpy() == dense).all()
    print(fmt, "->", T.format)"""),
    ("code", """display(SVG(dot_to_svg(A.asformat("dcsr").fiber_tree_dot())))"""),
    ("md", """Fill values need not be zero. A distance matrix is naturally sparse around `inf`:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
D = ss.Tensor.from_numpy(np.array([[0, np.inf, 4], [np.inf, 0, np.inf]]), "csr", fill=np.inf, name="D")
print(D)
print(D.to_numpy())"""),
    ("md", """Conversions from scipy share memory when the layout already matches:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
S = sp.random(6, 6, density=0.3, format="csr", random_state=0)
B = ss.Tensor.from_scipy(S, name="B")
print(np.shares_memory(B.levels[1].idx, S.indices), np.shares_memory(B.vals, S.data))"""),
    ("md", """## 2. Index notation and the reference evaluator

The parser makes every reduction explicit (einsum semantics: reductions are per term), and
`evaluate` computes any expression densely with numpy, including the result's fill value."""),
    ("code", """# NBVAL_CHECK_OUTPUT
print(ss.parse("y[i] = A[i, j] * x[j] + b[i]"))
print(ss.parse("C[i, j] = min(A[i, k] + B[k, j])"))"""),
    ("code", """# NBVAL_CHECK_OUTPUT
x = np.array([1.0, 2.0, 3.0, 4.0])
y, fill = ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)
print(y, "fill:", fill)
dist, fill = ss.evaluate("d[i] = min(D[i, j] + w[j])", D=D, w=np.array([1.0, 2.0, 0.5]))
print(dist, "fill:", fill)"""),
    ("md", """Mistakes are reported in your terms:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
try:
    ss.parse("y[i] = A[i, j * x[j]")
except ss.ParseError as e:
    print(e)
try:
    ss.evaluate("y[i] = A[i, j] * x[j]", A=A, x=np.ones(5))
except ss.ShapeError as e:
    print(e)"""),
    ("md", """## 3. The imperative IR, its C, and its speed

Every lowering ends in a small C-like IR. Here is CSR SpMV written in it by hand; it prints as
readable pseudo-C, runs in a Python interpreter (a second oracle), and compiles to C through cffi."""),
    ("code", """from compiler.imperative import interpret
from compiler.imperative.examples import csr_spmv

S = sp.random(2000, 2000, density=0.01, format="csr", random_state=1)
A2 = ss.Tensor.from_scipy(S, name="A")       # shares scipy's int32 index arrays
spmv = csr_spmv(index=A2.levels[1].index_dtype.name)
print(spmv)"""),
    ("code", """trace = ss.Trace()
kernel = ss.compile_function(spmv, trace=trace)
print(kernel.c_source)"""),
    ("code", """x = np.random.default_rng(0).random(2000)
args = dict(m=A2.shape[0], A_pos=A2.levels[1].pos, A_idx=A2.levels[1].idx, A_val=A2.vals, x=x)
y = kernel(**args, y=np.zeros(2000))["y"]
y_interp = interpret(spmv, **args, y=np.zeros(2000))["y"]
assert np.allclose(y, S @ x) and np.allclose(y_interp, S @ x)
print("compiled kernel, interpreter and scipy agree")"""),
    ("code", """import timeit
out = np.zeros(2000)
t_ss = min(timeit.repeat(lambda: kernel(**args, y=out), number=200, repeat=5)) / 200
t_sp = min(timeit.repeat(lambda: S @ x, number=200, repeat=5)) / 200
print(f"sparsescope {t_ss * 1e6:.1f} us   scipy {t_sp * 1e6:.1f} us   ratio {t_ss / t_sp:.2f}")"""),
    ("md", """## 4. The trace

Compiling recorded its steps. Each step keeps the program before and after, and the artifacts
it built; the whole trace saves to JSON and loads back without re-running anything."""),
    ("code", """# NBVAL_CHECK_OUTPUT
print(trace.stages())
again = ss.Trace.from_json(trace.to_json())
print(again[0].artifact("c").text == kernel.c_source)"""),
    ("md", """Where next: the lattice compiler (TACO's theory) and the looplet compiler (Finch's) both lower
index notation to this IR, and the explorer lets you step through either."""),
]

EXPLORER = [
    ("md", """# The explorer: stepping through a lowering

Every lowering records a **trace**: the program before and after each stage, the artifacts the
stage built (fiber trees, iteration lattices, looplet nests, the C source) and every rewrite.
The `explorer` package turns a trace into a **session** you can step through, renders each step
to HTML and SVG, times the kernel, and exports the whole trace to one offline HTML page; the
`widgets.Explorer` puts all of it in one notebook UI.

Here the trace is CSR SpMV built from the foundation's pieces: the parse of
`y[i] = A[i, j] * x[j]`, the operands' fiber trees, the imperative IR and the C it compiles to.
Once the lattice and looplet compilers land, `compiler.lower(...).trace` opens the same way."""),
    ("code", """import numpy as np
from IPython.display import HTML, display

from explorer import compare, diff_steps, explore, export_html, render_step
from explorer.examples import build_broken, spmv_example
from widgets import Explorer

ex = spmv_example(n=2000, density=0.01, seed=1)   # traced and compiled
assert ex.check()                                 # the kernel agrees with the dense reference"""),
    ("md", """## A session

A session holds the steps, a current step and filters (by stage, by rewrite rule, or hiding
steps that changed nothing)."""),
    ("code", """# NBVAL_CHECK_OUTPUT
session = explore(ex.trace, name="spmv")
print(session.stages())
print(session.filter(hide_unchanged=True).visible)
_ = session.clear_filters()"""),
    ("md", """## The explorer UI

Step with the slider, the buttons or *play*; filter by stage; the panes show the program at this
step, the diff from the previous step, the drawing (the fiber trees here) and the C. *time it*
runs the kernel on the sample inputs against scipy and numpy, checking the results agree."""),
    ("code", """Explorer(session, run=ex.run(), baselines=ex.baselines(), check=np.allclose)"""),
    ("md", """## The same, without widgets

Everything the UI shows comes from the `explorer` package, so it also works in a script or a test:
the diff between any two steps, one step as HTML, timing with a small plot."""),
    ("code", """# NBVAL_CHECK_OUTPUT
print(diff_steps(session, 0, 2))"""),
    ("code", """display(HTML(render_step(session.step(1))))"""),
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

NOTEBOOKS = {"00-tour.ipynb": TOUR, "01-explorer.ipynb": EXPLORER}


def build(cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def main() -> None:
    for name, cells in NOTEBOOKS.items():
        nbformat.write(build(cells), HERE / name)


if __name__ == "__main__":
    main()
