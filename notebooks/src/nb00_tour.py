"""00-tour: CSR SpMV lowered by both strategies, stepped through in the explorer, timed against scipy."""

NAME = "00-tour.ipynb"
# opened before any cell runs, JupyterLab draws the tour's explorers from their stored state
WIDGET_STATE = True

CELLS = [
    ("md", """# A tour of sparsescope

Welcome! sparsescope is a sparse tensor compiler that **shows every step of its work**. You write
a computation in index notation, pick a storage format for each tensor, and sparsescope lowers it
to C, recording each intermediate on the way. In this tour you will:

1. meet **tensors** stored as trees of levels (*fiber trees*) and their **fill values**;
2. write **index notation** and check it with the dense **reference evaluator**;
3. lower CSR sparse matrix-vector multiplication (SpMV) by **both strategies**: TACO-style
   *iteration lattices* and Finch-style *looplets*, stepping through each in the **explorer**;
4. look at the generated **C** and **time it against scipy**.

Run the cells top to bottom (Shift-Enter). Nothing here needs more than a laptop. Before they
run, a trusted copy of this notebook (*Trust Notebook* in the command palette, or
`jupyter trust 00-tour.ipynb`) already shows its explorers as they were saved; the crossed link
on each control says no kernel is behind it yet, so run the cells to step through them."""),
    ("code", """import numpy as np
import scipy.sparse as sp
from IPython.display import HTML, display

import compiler as ss
from explorer import compare, render_dot
from widgets import Compare, Explorer"""),
    ("md", """## 1. Tensors are trees of levels

A CSR matrix is a `Dense` level of rows over a `SparseList` level of columns, ending in an
`Element` leaf that holds the values and the **fill value**: the value of every entry that is not
stored (here 0)."""),
    ("code", """# NBVAL_CHECK_OUTPUT
M = np.array([[0, 1.5, 0, 0],
              [0, 0,   0, 0],
              [2, 0,   0, 3]])
A = ss.Tensor.from_numpy(M, ss.csr(), name="A")
print(A)
print(A.fiber_tree_text())"""),
    ("code", """display(HTML(render_dot(A.fiber_tree_dot())))   # drawn in the page's theme"""),
    ("md", """Fill values need not be zero: a distance matrix is naturally "sparse" around infinity."""),
    ("code", """# NBVAL_CHECK_OUTPUT
D = ss.Tensor.from_numpy(np.array([[0, np.inf, 4], [np.inf, 0, np.inf]]), "csr", fill=np.inf, name="D")
print(D)"""),
    ("md", """## 2. Index notation and the reference evaluator

`y[i] = A[i, j] * x[j]` reads "for every `i`, sum over `j`". The parser makes the reduction
explicit, and `evaluate` computes any expression densely with numpy: it is the **oracle** every
compiled kernel is checked against."""),
    ("code", """# NBVAL_CHECK_OUTPUT
SPMV = "y[i] = A[i, j] * x[j]"
print(ss.parse(SPMV))
y_ref, fill = ss.evaluate(SPMV, A=A, x=np.array([1.0, 2.0, 3.0, 4.0]))
print(y_ref, "fill:", fill)"""),
    ("md", """## 3. Lowering CSR SpMV, two ways

`ss.lower(program, strategy=..., **tensors)` lowers the program for the formats of the tensors
you pass, compiles the C, and returns a **kernel**: call it with tensors to get the result, read
`.c_source`, and open `.trace`, the record of every step.

We use a random 2000 x 2000 CSR matrix with 1% non-zeros, straight from scipy (no copy)."""),
    ("code", """S = sp.random(2000, 2000, density=0.01, format="csr", random_state=1)
A = ss.Tensor.from_scipy(S, name="A")
x = np.random.default_rng(0).random(2000)

by_lattice = ss.lower(SPMV, strategy="lattice", A=A, x=x)
by_looplets = ss.lower(SPMV, strategy="looplets", A=A, x=x)

# both kernels agree with the dense oracle (and with scipy)
y_oracle, _ = ss.evaluate(SPMV, A=A, x=x)
for kernel in (by_lattice, by_looplets):
    assert np.allclose(kernel(A=A, x=x).to_numpy(), y_oracle)
    assert np.allclose(kernel(A=A, x=x).to_numpy(), S @ x)
print("both kernels agree with the oracle")"""),
    ("md", """The same product from arrays instead of an index string: `ss.asarray` wraps scipy's matrix
(no copy), `@`, `+`, `.sum(axis=...)`, `.T`, `concat`, slicing and the rest of the Array API build a lazy
expression, and `ss.lower(expr)` gives the ONE kernel that computes all of it (`expr.compute()` runs
it). Shape operators (concat, stack, slices, and reshapes of any rank: a ravel, a vector made a
matrix or a 3-D array, a 3-D array made a matrix) go into that kernel as the notation's `concat`,
`slice`, `collapse` and `split`: a reshape collapses the axes it merges and splits the ones it makes.
A stack reshaped so that its new axis merges with the next is the operands one after the other,
a `concat` (`ss.array.stack([A, B]).reshape(10, 4)` of 5x4 matrices is a vstack); reshaped so that a
row straddles two of them (`ss.array.stack([A, B]).reshape(5, 8)`), a split of the concatenated ravels,
which the lattice walks part by part. Given no strategy, a CSC walked against its storage order (its
ravel, say) is read converted by the lattice (a counting sort) where looplets would locate every
coordinate of its extents, and the trace's `strategy` step says why. What no strategy lowers (such a
straddling stack with each row summed, `ss.array.stack([A, B]).reshape(5, 8).sum(axis=1)`, for
instance) is materialized, and the trace's `materialize` step says so; a statement a strategy
refuses is a `retry` step, saying what was tried instead."""),
    ("code", """expr = ss.asarray(S) @ ss.asarray(x) + 1
array_kernel = ss.lower(expr)
print(array_kernel.program)
assert np.allclose(expr.compute().to_numpy(), S @ x + 1)"""),
    ("md", """What numpy users reach for next is made of those and fuses the same way: `mean`, `var`, `std`,
`count_nonzero`, `isnan`/`isinf`/`isfinite`, `clip`, `sign`, `flip`, `squeeze`, ... Each column's mean
is a sum over the rows divided by their count, one kernel; `numpy.asarray` of an array or a Tensor
is its dense array."""),
    ("code", """col_means = ss.array.mean(ss.asarray(S), axis=0)
print(ss.lower(col_means).program)
assert np.allclose(np.asarray(col_means), S.toarray().mean(axis=0))"""),
    ("md", """A Tensor's own operators compute at once, as scipy.sparse's do: `t.T`, `t[::2]`, `t * 2`,
`t.reshape(...)`, `t.sum(axis=0)` each run one kernel and give a Tensor. Wrap the tensor with
`ss.asarray` to make a chain of them one kernel instead."""),
    ("code", """t = ss.Tensor.from_scipy(S)
rows = t[::2].T * 2   # three kernels, a Tensor after each
assert np.allclose(rows.to_numpy(), S.toarray()[::2].T * 2)
fused = ss.asarray(t)[::2].T * 2   # one kernel
assert np.allclose(fused.compute().to_numpy(), rows.to_numpy())
print(rows)"""),
    ("md", """Each strategy records different steps. The **lattice** strategy concretizes the index
notation, chooses a loop order (the *iteration graph*), builds one *iteration lattice* per loop
(which operands to co-iterate, and which cases arise), then CFIR and the imperative IR. The
**looplet** strategy rewrites the program into a normal form, *unfurls* each tensor level into a
*looplet nest* (Lookup, Stepper, Spike, Phase, ...) and lowers looplet by looplet, simplifying as
it goes."""),
    ("code", """print("lattice: ", by_lattice.trace.stages())
print("looplets:", by_looplets.trace.stages())"""),
    ("md", """### Stepping through the lattice lowering

Press **next ▶** (or drag the slider, or *play*). The panes show the program at this step, what
the step changed (a step that turns one representation into another, index notation into a
lattice or IR into C, shows its input instead, and says so), the step's drawing (the iteration
graph, then the lattice of each loop, then the CFIR and the imperative IR as trees) and the C, titled with the step that emitted
it. Use *show* to keep only some stages. *time it* runs the kernel on the sample inputs against
scipy and numpy, and checks the results agree. *copy as code* gives the `lower()` call that
recreates the view; *export page* writes it as one offline page and shows where."""),
    ("code", """run_lattice = lambda: by_lattice(A=A, x=x)
run_looplets = lambda: by_looplets(A=A, x=x)
dense = S.toarray()
baselines = {"scipy": lambda: S @ x, "numpy (dense)": lambda: dense @ x}
agrees = lambda y, ref: np.allclose(y.to_numpy(), ref)

lattice_view = Explorer(by_lattice, run=run_lattice, baselines=baselines, check=agrees)
lattice_view"""),
    ("md", """The lattice at each loop is the heart of the TACO theory. For SpMV it is tiny: at `i` the
dense rows are simply walked; at `j` only the stored entries of row `i` matter, because
`0 * x[j] = 0`. The same steps, without widgets:"""),
    ("code", """lattices = [step.artifact("lattice").text for step in by_lattice.trace.find("lattice")]
assert "while j <- A" in lattices[-1]      # at j: walk the stored entries of A only
print("\\n\\n".join(lattices))"""),
    ("code", """lattice_step = by_lattice.trace.stages().index("lattice") + 1   # the lattice of the j loop
lattice_view.goto(lattice_step)
display(HTML(lattice_view.artifact_pane.value))"""),
    ("md", """### Stepping through the looplet lowering

Here the drawing is the **looplet nest** of each unfurled access. At a `lower:Stepper` or
`lower:Spike` step the looplet being lowered is highlighted in the nest. Filter with
*show: stage lower* to see only the lowering steps, or *stage simplify* to see the rewrites."""),
    ("code", """looplet_view = Explorer(by_looplets, run=run_looplets, baselines=baselines, check=agrees)
looplet_view"""),
    ("code", """nest = [a for s in by_looplets.trace.find("unfurl") for a in s.artifacts if a.name.startswith("A.lvl1")][0]
print(nest.text)"""),
    ("md", """### Side by side

`Compare` puts the two variants next to each other: the lattices of one and the looplet nests of
the other, their C, and *time both* against scipy. Its *stage* slider moves both columns at once,
aligned by stage: parse next to parse, the lattice of `j` next to the unfurl of `j`, C next to C
(`Compare.for_program(..., A=matrix, x=vector)` given data times both strategies too). Each
column links its own C and drawing: hovering or clicking a C line outlines the lattice point or
looplet it came from in that column."""),
    ("code", """Compare(by_lattice, by_looplets, labels=("lattice", "looplets"),
        run_a=run_lattice, run_b=run_looplets, baselines={"scipy": baselines["scipy"]})"""),
    ("md", """### Try other formats

`Explorer.for_program` lowers a program for you and adds a **format picker per tensor and per
level** (like the TACO web tool; a level the strategy cannot read or assemble is marked ✗) and
a **schedule editor**: make `A`'s first level `SparseList`
(DCSR), or choose the preset `csc`, and the lowering is redone and redrawn at once. A lattice
point or looplet in the drawing (or a box of the CFIR or IR tree) and the C lines it produced
share a colour; as in Compiler
Explorer, hovering either outlines the other (and the program's accesses), clicking a point
scrolls the C to its first line, and a line's or a point's tooltip says what it computes. At a
`lower:*` step the looplet being lowered and its C are marked together."""),
    ("code", """playground = Explorer.for_program("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense")
playground"""),
    ("code", """# NBVAL_CHECK_OUTPUT
playground.format_pickers["A"].preset.value = "dcsr"     # what choosing "dcsr" in the menu does
print(playground.format_pickers["A"].value, "->", playground.session.error or "lowered")"""),
    ("md", """### A playground

`Playground` goes further, as the TACO web tool does: **edit the expression** (a typo is
pointed at under the box), **switch the strategy**, and pick every tensor's format. The level
menus mark with ✗ what the chosen strategy cannot read or assemble (today both strategies read
every level and build every output format; each builds a level it cannot assemble itself
through a SparseList converted after the call, the trace's `convert` step saying so), the schedule
box offers the commands the chosen strategy takes (the lattice's TACO commands, the looplets'
`privatize`), and *what changed* diffs the C and the lattices or looplet nests with the lowering
before."""),
    ("code", """from widgets import Playground

play = Playground("y[i] = A[i, j] * x[j]", A="csr", x="dense")
play"""),
    ("code", """# NBVAL_CHECK_OUTPUT
play.strategy.value = "looplets"                 # what clicking "looplets" does
play.expression.value = "y[i] = A[i, j] * x[j] * z[j]"
print(play.session.error or "lowered", "by", play.strategy.value, "with pickers for", sorted(play.format_pickers))"""),
    ("md", """## 4. The C, and how fast it runs

The lattice kernel is the loop nest you would write by hand: rows, then the stored entries of
each row. The looplet kernel walks the same entries through a Stepper of Spikes. Both read `S`'s
own arrays, which scipy may write between two calls: each checks a coordinate where it reads it
(`if ((uint64_t)j >= A1_size)`, a negative one being a huge one unsigned; the trace's
`owned-coordinates` step), and a call checks the row starts alone."""),
    ("code", """print(by_lattice.c_source)"""),
    ("code", """print(by_looplets.c_source)"""),
    ("md", """Timing: `explorer.compare` runs each call several times and reports the median, the spread
and the ratio to the kernel; `check` compares every baseline's result with the kernel's. (The
kernel call includes binding the tensors and building the result, a few microseconds of Python.)"""),
    ("code", """for name, run in (("lattice", run_lattice), ("looplets", run_looplets)):
    result = compare(run, baselines, repeats=5, name=name, check=agrees)
    assert all(result.checks.values())
    display(HTML(f"<h4>{name}</h4>" + result.html()))"""),
    ("md", """## Where next

| notebook | what you learn |
| --- | --- |
| `01-explorer` | the explorer in depth: filters, failures, HTML export |
| `02-formats-and-fiber-trees` | level formats and fiber trees |
| `03-iteration-lattices` | lattices, merge loops and the brute-force check |
| `04-looplets` | looplet nests, lowering rules and the simplifier |
| `05-finch-language` | loop programs with control flow |
| `06-fill-values-and-user-functions` | non-zero fills, min-plus, user functions, masks |
| `07-workspaces-and-scheduling` | loop orders and what a schedule may not do |
| `08-new-level-format` | define a level format, run it under both strategies, debug it with the explorer |
| `09-performance` | benchmarks against scipy and numpy |
| `10-shape-operators` | reshape, concatenate and slice sparse arrays, fused; each stage in the explorer |"""),
]
