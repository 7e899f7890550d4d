"""07: workspaces and scheduling."""

NAME = "07-workspaces-and-scheduling.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# Scheduling: loop orders and what they may not do

The *algorithm* (index notation) says what to compute; a *schedule* says in which order. TACO's
scheduling language (Senanayake et al., 2020) transforms concrete index notation with commands
such as `reorder`, `split` and `precompute` (which introduces a **workspace**).

The lattice strategy takes the loop order as a schedule: `options={"order": [...]}` fixes the
order of the loops (a `reorder`). The compiler checks that the order is legal for the formats: a
sparse level can only be iterated after the levels above it. Workspaces (`precompute`) are
introduced by the compiler where a sparse output needs one (SpGEMM below).
For loop programs (notebook 05) the order is simply the order you write the loops in."""),
    ("code", """import numpy as np
import scipy.sparse as sp
from IPython.display import HTML, display

import compiler as ss
from explorer import compare
from widgets import Compare, Explorer

SPMV = "y[i] = A[i, j] * x[j]"
rng = np.random.default_rng(2)"""),
    ("md", """## The default order follows storage

For CSR the row loop is outside; for CSC the column loop is. The iteration graph step records the
order chosen."""),
    ("code", """# NBVAL_CHECK_OUTPUT
for fmt in ["csr", "csc"]:
    k = ss.lower(SPMV, A=fmt, x="dense")
    print(fmt, "->", k.trace.find("iteration-graph")[0].note)"""),
    ("md", """## Choosing the order, and what is rejected

A legal order is accepted and recorded; an order that would iterate `j` before `i` in a CSR
matrix is rejected, and so is an order that does not name every loop. The error names the
tensor and the indices."""),
    ("code", """# NBVAL_CHECK_OUTPUT
k = ss.lower(SPMV, A="csc", x="dense", options={"order": ["j", "i"]})
print(k.trace.find("iteration-graph")[0].note)
for order in (["j", "i"], ["i"], ["i", "k"]):
    try:
        ss.lower(SPMV, A="csr", x="dense", options={"order": order})
    except ss.StrategyError as e:
        print(order, "->", e)
try:
    ss.lower(SPMV, A="csr", x="dense", options={"split": 32})
except ss.StrategyError as e:
    print(str(e).split(";")[0])   # the rest lists the options the strategy takes"""),
    ("md", """## A failed schedule in the explorer

When lowering fails, the explorer opens at the failing step with the error, showing how far the
lowering got."""),
    ("code", """from explorer import explore

failed = explore(lambda trace: ss.lower(SPMV, trace=trace, A="csr", x="dense", options={"order": ["j", "i"]}))
print(failed)
Explorer(failed)"""),
    ("md", """## Schedules: `reorder`, `precompute`, `parallelize`

The full scheduling language is a `Schedule`: a list of commands applied in order to the concrete
statement, passed as `options={"schedule": ...}` (a `Schedule`, or a list of tuples such as
`[("reorder", "j", "i")]`). Each command is a trace step `schedule:<name>` with the statement
before and after. A command that does not apply raises a `StrategyError` saying why: `reorder(j, i)`
is legal for CSC (stored column by column) and not for CSR.

`parallelize(i)` runs the outer loop on OpenMP threads. A workspace inside the loop (SpGEMM's row
accumulator) becomes one part per thread: the `privatize` step allocates `thread_count()` parts
and each iteration views its own. A CSR output cannot be appended through one shared counter from
several threads, so it is assembled in two phases on threads: each row counts its entries, a
prefix sum gives every row its start, and each row then fills its own entries, skipping those
equal to the fill value, and records where they end. A last pass moves the rows down over the
gaps the skipped entries left (nothing moves before the first gap). A DCSR output works the same
way: its rows are counted by row number, and the empty ones dropped at the end. When a row's
entries all come from its workspace, as in SpGEMM, the count is cheaper: the row counts its
products (the lengths of B's rows it reads), at least as many as its entries, and the room it
does not fill is one more gap. A row that runs one loop, as the intersection of `A ∘ B`, counts
the length of its shortest fiber the same way, with no merge. A COO output, or a sparse vector,
has no row positions: its rows count and start in a scratch array instead. A CSF output fills its
upper lists on the threads as if they were Dense levels (every fiber `(i, j)` of its last list counted
and filled by its row), and a pass after them lists the coordinates whose fiber got entries. A loop
the threads cannot share (one merging two sparse levels of `i`) is refused with the reason."""),
    ("code", """# NBVAL_CHECK_OUTPUT
from compiler.lattice.schedule import Schedule

by_columns = Schedule().reorder("j", "i")
for fmt in ["csc", "csr"]:
    try:
        k = ss.lower(SPMV, A=fmt, x="dense", options={"schedule": by_columns})
        print(fmt, [s.stage for s in k.trace.steps if s.stage.startswith("schedule")],
              k.trace.find("iteration-graph")[0].note)
    except ss.StrategyError as e:
        print(fmt, "->", e)
k = ss.lower(SPMV, A="csr", x="dense", options={"schedule": [("parallelize", "i")]})
print([s.stage for s in k.trace.steps if s.stage.startswith("schedule")])
k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A="csr", B="csr", C="csr", options={"schedule": [("parallelize", "i")]})
print(k.trace.stages())
print(k.trace.find("lower")[0].note)
print(k.trace.find("privatize")[0].note)
print("\\n".join(line for line in k.c_source.splitlines() if "thread_id()" in line or "thread_count()" in line))
k = ss.lower("C[i, j] = A[i, k] * B[k, j]", A="csr", B="csr", C="coo", options={"schedule": [("parallelize", "i")]})
print("\\n".join(line for line in k.c_source.splitlines() if "C0_start[" in line and "=" in line))
k = ss.lower("C[i, j, l] = A[i, j, k] * B[l, k]", A="csf", B="csr", C="csf",
             options={"schedule": [("parallelize", "i")]})
print("\\n".join(k.trace.find("lower")[0].note.split("; ")))
try:
    ss.lower("C[i, j, k] = A[i, j, k] * B[i, j, k]", A="csf", B="csf", C="csf",
             options={"schedule": [("parallelize", "i")]})
except ss.StrategyError as e:
    print(e)"""),
    ("md", """A **scalar** result is reduced on threads with OpenMP's `reduction` clause: each thread adds its
rows into its own copy of the accumulator, and OpenMP adds the copies at the end. That works for
`+`, `*`, `and`, `or` and integer `max`/`min`. OpenMP's own max combines two threads' maxima with
`>`, which passes over a NaN that numpy's max (and ours) keeps, so a float `max` or `min` declares
its own reduction (`omp declare reduction`), whose combiner keeps a NaN."""),
    ("code", """# NBVAL_CHECK_OUTPUT
k = ss.lower("s = sum[i, j](A[i, j])", A="csr", options={"schedule": [("parallelize", "i")]})
print([line.strip() for line in k.c_source.splitlines() if "omp parallel" in line])
k = ss.lower("s = max[i, j](A[i, j])", A="csr", options={"schedule": [("parallelize", "i")]})
print("\\n".join(line.strip() for line in k.c_source.splitlines() if "#pragma omp" in line and "simd" not in line))
An = ss.Tensor.from_numpy(np.array([[1.0, 0.0], [np.nan, 2.0]]), "csr")
print(k(A=An).to_numpy())"""),
    ("md", """Where threads would **update the same elements** of a dense output (SpMV of a CSC matrix by
columns: every column adds into `y`'s rows), `parallelize` is refused, unless `races=` says how the
threads share the output, as TACO's output race strategies do: `races="atomics"` makes each update
atomic (`#pragma omp atomic`: one atomic instruction per update, for `+`, `*`, `&`, `|` and `^`), and
`races="copies"` gives each thread its own copy of the output, added into it after the loop (more
memory, any update with an identity, `max` included)."""),
    ("code", """# NBVAL_CHECK_OUTPUT
by_columns = [("parallelize", "j")]
try:
    ss.lower(SPMV, A="csc", x="dense", options={"schedule": by_columns})
except ss.StrategyError as e:
    print(e)
for races in ["atomics", "copies"]:
    k = ss.lower(SPMV, A="csc", x="dense", options={"schedule": [("parallelize", "j", races)]})
    print(f"--- races={races!r}")
    print("\\n".join(line for line in k.c_source.splitlines()
                    if "y_" in line and "=" in line and "pos" not in line or "omp atomic" in line))"""),
    ("md", """`precompute` can also take a **sub-expression** (TACO's `precompute(expr, i, w)`): the sum
`c + d` below is computed into a workspace first, then multiplied by `b`. Where that would change
the result (part of a product under a sum over another index), the command is refused with the
reason. The sub-expression is found up to the order and grouping of `+`, `*`, `min` and `max`
(operators both commutative and associative): asking for `d[i] + b[i]` in
`b[i] + c[i] + d[i]` regroups the sum as `(d[i] + b[i]) + c[i]` first."""),
    ("code", """k = ss.lower("a[i] = b[i] * (c[i] + d[i])", b="sparse_vector", c="sparse_vector", d="sparse_vector",
             options={"schedule": Schedule().precompute("i", "w", expr="c[i] + d[i]")})
print(k.trace.find("schedule:precompute")[0].note)
print(k.trace.find("schedule:precompute")[0].after)
try:
    ss.lower(SPMV, A="csr", x="dense", options={"schedule": Schedule().precompute("i", "w", expr="A[i, j]")})
except ss.StrategyError as e:
    print(e)"""),
    ("code", """k = ss.lower("a[i] = e[i] * (b[i] + c[i] + d[i])", b="sparse_vector", c="sparse_vector", d="sparse_vector",
             e="dense", options={"schedule": Schedule().precompute("i", "w", expr="d[i] + b[i]")})
print(k.trace.find("schedule:precompute")[0].after)"""),
    ("md", """### Workspaces the formats ask for

`y[i] = A[i, j] + B[i, j]` sums each matrix over `j` inside the loop over `i`
(`sum[j](A[i, j]) + sum[j](B[i, j])`). A CSC matrix cannot be read row by row, so its sum runs
first, before the loop over `i`, into a workspace over `i`: the same `precompute` a user would
write, applied because the formats need it (a `precompute` step marked *automatic*). And a nested
reduction that does not use a loop around it is computed once, outside that loop (a `hoist`
step): below, the row max of `A` is taken once per row, not once per entry of `B`'s row."""),
    ("code", """# NBVAL_CHECK_OUTPUT
k = ss.lower("y[i] = A[i, j] + B[i, j]", A="csc", B="csr")
for step in k.trace.find("precompute"):
    print(step.note)
    print(step.after)
k = ss.lower("y[i] = max[j](A[i, j]) * B[i, j]", A="csr", B="csr")
print(k.trace.find("concretize")[0].note)
print(k.trace.find("hoist")[0].after)"""),
    ("md", """When that workspace is only **added to one more term** (`y = A x + z`, CSC `A`), it goes again:
`y` starts at `z` and the columns add into `y` itself. That is TACO's **sequence** statement,
`define; mutate` (a `sequence` step): no workspace to allocate, zero and read back, and the loop
over the columns is now the outer loop of the mutation, which `parallelize` can take with a race
strategy. Several such workspaces of one operator (CSC `y = A x + B z`) go the same way: `y = 0;
y += A x; y += B z`, one nest after another (on one thread). (A workspace you asked for with
`precompute` stays, as scheduled.)"""),
    ("code", """# NBVAL_CHECK_OUTPUT
k = ss.lower("y[i] = A[i, j] * x[j] + z[i]", A="csc", x="dense", z="dense",
             options={"schedule": [("parallelize", "j", "atomics")]})
(step,) = k.trace.find("sequence")
print(step.note)
print(step.after)
print("\\n".join(line for line in k.c_source.splitlines() if "y_val[i]" in line or "#pragma omp" in line))"""),
    ("md", """A sum of **three or more sparse terms** into a dense output is a sequence too: merged in
one loop, `n` sparse terms make up to `2^n - 1` lattice points at each level of the nest (four 3-D
CSF tensors: 15 cases in each of three nested loops, hundreds of KB of C), while one after another
each term's loops visit only its own entries. It applies where it computes the same: every term's
fill is the sum's identity and its dtype the output's, and the terms add in the order written (a
float sum splits along `(a + b) + c` only; an update `y[i] += ...` becomes updates only where
regrouping is exact, integers or `max=`/`min=`). Dense terms add no case: those in front stay
together in the first nest. Under `parallelize(i)` each nest runs its loop over `i` on the threads,
where each thread owns its rows of the output."""),
    ("code", """# NBVAL_CHECK_OUTPUT
k = ss.lower("a[i] = x[i] + y[i] + z[i]", x="sparse_vector", y="sparse_vector", z="sparse_vector")
(step,) = k.trace.find("sequence")
print(step.note)
print(step.after)
print(k.c_source[k.c_source.index("{", k.c_source.index("int lattice_a")):])"""),
    ("md", """### Composed schedules: TACO's SpMM

`split`, `fuse` and `pos` derive new loops, and later commands name them: TACO's CPU schedule for
SpMM (`C[i, k] = A[i, j] * B[j, k]`, CSR `A`, dense `B`) splits the rows into chunks, iterates
`A`'s positions of `j` in blocks of 8, and runs the loop over `k` *between* a block's outer and
inner loops, `reorder(i0, i1, jpos0, k, jpos1)`, so each block's entries of `A` are reused across
a whole row of `B`. The trace's `schedule:reorder` step shows the loops in that order; the emitter
builds each original loop's derived loops together, then moves `k` out of the block loop (a
`LoopOrder` relation), where every update combines in any order (`+=`) and the block loop's bounds
do not depend on `k`. A tiling (`i0, j0, k0, i1, j1, k1`) works the same way; a loop over a sparse
level's positions cannot leave the loops that pick its fiber, and says so."""),
    ("code", """# NBVAL_CHECK_OUTPUT
spmm = (Schedule().split("i", "i0", "i1", 16).pos("j", "jpos", "A").split("jpos", "jpos0", "jpos1", 8)
        .reorder("i0", "i1", "jpos0", "k", "jpos1").parallelize("i0"))
k = ss.lower("C[i, k] = A[i, j] * B[j, k]", A="csr", B="dense", C="dense", options={"schedule": spmm})
print(k.trace.find("schedule:reorder")[0].after)
print("\\n".join(line for line in k.c_source.splitlines() if "for (" in line or "omp" in line))
try:
    ss.lower("C[i, k] = A[i, j] * B[j, k]", A="csr", B="csr", C="dense", options={"schedule": spmm})
except ss.StrategyError as e:
    print(e)"""),
    ("md", """## Formats and schedules, interactively

`Explorer.for_program` lowers a program and adds, for every tensor, a **per-level format picker**
(like the TACO web tool: one dropdown per storage level, from `Dense`, `SparseList`, `SparseBand`,
`RunList`, ... and `SparseCOO(m)` spanning `m` levels; plus the **mode order**; a level the
strategy cannot read or assemble is marked ✗) and a **schedule editor**. Changing a picker re-lowers at once; edit the schedule (one command per line or separated
by `;`) and press *re-lower*. A command that does not apply shows its `StrategyError` in the red
banner, with the timeline at the step where lowering stopped.

Try: set `A`'s mode order to `modes 0 1` (CSR): `reorder(j, i)` no longer applies. Then make its
first level `SparseList` (DCSR) and clear the schedule, and watch the C change."""),
    ("code", """view = Explorer.for_program(SPMV, "lattice", A="csc", x="dense", schedule="reorder(j, i)")
view"""),
    ("md", """The same, from code: the pickers are ordinary widgets (`view.format_pickers["A"].levels`,
`.mode_order`, `.preset`), and `view.format_pickers["A"].value` is the `Format` being lowered."""),
    ("code", """# NBVAL_CHECK_OUTPUT
A_picker = view.format_pickers["A"]
print(A_picker.value, "->", view.session.error)
A_picker.mode_order.value = (0, 1)          # CSR: the schedule's reorder no longer applies
print(A_picker.value, "->", view.session.error)
view.schedule_editor.value = ""
A_picker.levels[0].value = "SparseList"      # DCSR
view.relower()
print(A_picker.value, "(" + A_picker.preset.value + ") ->", view.session.error)
print([line for line in view.session.last_artifact("c").text.splitlines() if "for (" in line or "while" in line])"""),
    ("md", """## SpGEMM and workspaces

Sparse matrix multiplication `C[i, j] = A[i, k] * B[k, j]` with CSR operands runs in the order
`i, k, j` (Gustavson's algorithm): for each row of `A`, scale rows of `B` and add them into row `i`
of `C`. The additions land at scattered `j`, so a **sparse** `C` needs a dense **workspace** row:
TACO's `precompute`, which rewrites the statement to `C[i, j] = w[j] where w[j] += A[i, k] * B[k, j]`.
When the compiler introduces one, the trace has a `precompute` step and the CFIR allocates,
gathers and resets the workspace; a compiler without workspace support says so and suggests a
dense output."""),
    ("code", """try:
    k_ws = ss.lower("C[i, j] = A[i, k] * B[k, j]", A="csr", B="csr", C="csr")
except ss.StrategyError as e:
    k_ws = None
    print("no workspace support:", e)
if k_ws is not None:
    print(k_ws.trace.stages())
    for step in k_ws.trace.find("precompute"):
        print(step.after)
    print(k_ws.trace.find("cfir")[0].artifacts[0].text)
    display(Explorer(k_ws.trace))"""),
    ("code", """SA = sp.random(300, 300, density=0.02, format="csr", random_state=1)
SB = sp.random(300, 300, density=0.02, format="csr", random_state=2)
A, B = ss.Tensor.from_scipy(SA, name="A"), ss.Tensor.from_scipy(SB, name="B")
spgemm = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B)
print(spgemm.trace.find("iteration-graph")[0].note)
assert np.allclose(spgemm(A=A, B=B).to_numpy(), (SA @ SB).toarray())
display(HTML(compare(lambda: spgemm(A=A, B=B), {"scipy (sparse result)": lambda: SA @ SB}, repeats=3).html()))
if k_ws is not None:   # the sparse result, through the workspace
    k_ws = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=B, C="csr")   # for scipy's int32 indices
    assert np.allclose(k_ws(A=A, B=B).to_numpy(), (SA @ SB).toarray())
    display(HTML(compare(lambda: k_ws(A=A, B=B), {"scipy": lambda: SA @ SB}, repeats=3, name="CSR result").html()))"""),
    ("md", """### A dense or a sparse workspace

The workspace above is *sparse*: besides the dense row of values it keeps an occupancy bitmap and
the list of the columns set, so the consumer visits (and resets) only those, sorted. TACO's first
workspaces were *dense*: a plain array that the consumer scans whole, every row. `precompute`
takes the workspace's format; compare the C of the two and their times on wide, very sparse rows,
where the dense scan costs a whole row per row of `A`:"""),
    ("code", """S1 = sp.random(2000, 2000, density=0.001, format="csr", random_state=4)
A1 = ss.Tensor.from_scipy(S1, name="A")
variants = {}
for fmt in ("sparse", "dense"):
    s = Schedule().reorder("i", "k", "j").precompute("j", "w", format=fmt)
    variants[fmt] = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A1, B=A1, C="csr", options={"schedule": s})
    print(fmt, "->", variants[fmt].trace.find("schedule:precompute")[0].note)
    assert np.allclose(variants[fmt](A=A1, B=A1).to_numpy(), (S1 @ S1).toarray())
display(HTML(compare(lambda: variants["sparse"](A=A1, B=A1), {"dense workspace": lambda: variants["dense"](A=A1, B=A1)},
                     repeats=3, name="sparse workspace").html()))"""),
    ("md", """Over **several indices** a workspace is dense by default. With `format="sparse"` it keeps the
list of the *row-major positions* it set: the list is sorted, and the consumer reads it mode by
mode, like a SparseCOO level (`w.0` runs over the rows set, `w.1` over the columns of each). Below,
SpGEMM as a sum of outer products (loops `k, i, j`, with `A` stored by columns) gathers the whole
product in `w[i, j]`: the dense workspace is scanned whole, all 4 million entries, while the sparse
one visits only the entries set (and takes three times the memory). Without a schedule the
compiler takes neither: no row of `C` would be finished before the last `k`, so it reads `A` as
CSR instead, converted at each call in O(nnz + n) (a `convert` step in the trace), and multiplies
row by row with a workspace over one row (Gustavson). Ask for the order `k, i, j` to get the
outer product."""),
    ("code", """A1c = ss.Tensor.from_scipy(S1.tocsc(), name="A")
outer = {}
for fmt in ("sparse", "dense"):
    s = Schedule().reorder("k", "i", "j").precompute(("i", "j"), "w", format=fmt)
    outer[fmt] = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A1c, B=A1, C="csr", options={"schedule": s})
    assert np.allclose(outer[fmt](A=A1c, B=A1).to_numpy(), (S1 @ S1).toarray())
print(outer["sparse"].trace.find("cfir")[0].artifacts[0].text)
outer["automatic"] = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=A1c, B=A1, C="csr")
print(outer["automatic"].trace.find("convert")[0].note)
print(outer["automatic"].trace.find("precompute")[0].note)
assert np.allclose(outer["automatic"](A=A1c, B=A1).to_numpy(), (S1 @ S1).toarray())
display(HTML(compare(lambda: outer["sparse"](A=A1c, B=A1), {"dense 2-D workspace": lambda: outer["dense"](A=A1c, B=A1),
                     "A read as CSR": lambda: outer["automatic"](A=A1c, B=A1)},
                     repeats=3, name="sparse 2-D workspace").html()))"""),
    ("md", """A tensor read **in both orders**, as in `A + Aᵀ`, cannot be converted into an order that
suits both of its reads. The kernel reads it twice instead: `B[i, j]` from `B` itself, and
`B[j, i]` from `B_csc`, a copy of `B` converted at each call. The `convert` step shows the program
rewritten to read the copy."""),
    ("code", """# NBVAL_CHECK_OUTPUT
sym = ss.lower("C[i, j] = B[i, j] + B[j, i]", B=A1, C="csr")
step = sym.trace.find("convert")[0]
print(step.after)
print(step.note[step.note.index("the kernel"):])
assert np.allclose(sym(B=A1).to_numpy(), (S1 + S1.T).toarray())"""),
    ("md", """`A Aᵀ` reads `A` in both orders too: `C[i, j] = A[i, k] * A[j, k]`. Its loops could run `i, j, k`
with every tensor in storage order, but then every pair `(i, j)` merges a row of `A` with another
row (an *inner product*: 4 million merges here, however few entries `C` gets). The compiler reads
`A[j, k]` from a CSC copy instead and runs `i, k, j` with a workspace over `j` (Gustavson). Giving
the order `i, j, k` keeps the inner product, for comparison."""),
    ("code", """gram = ss.lower("C[i, j] = A[i, k] * A[j, k]", A=A1, C="csr")
print(gram.trace.find("convert")[0].note.split(": ", 1)[1].split("; the kernel")[0])
inner = ss.lower("C[i, j] = A[i, k] * A[j, k]", A=A1, C="csr", options={"order": ["i", "j", "k"]})
for kern in (gram, inner):
    assert np.allclose(kern(A=A1).to_numpy(), (S1 @ S1.T).toarray())
display(HTML(compare(lambda: gram(A=A1), {"inner product (order i, j, k)": lambda: inner(A=A1)},
                     repeats=3, name="A[j, k] from a CSC copy").html()))"""),
    ("md", """## Two orders side by side

The same SpMV over a CSC matrix (column order, scattering into `y`) next to CSR (row order,
accumulating in a scalar): compare the C and the lattices."""),
    ("code", """S = sp.random(1000, 1000, density=0.01, format="csr", random_state=3)
x = rng.random(1000)
Acsr, Acsc = ss.Tensor.from_scipy(S, name="A"), ss.Tensor.from_scipy(S.tocsc(), name="A")
by_rows = ss.lower(SPMV, A=Acsr, x=x)
by_cols = ss.lower(SPMV, A=Acsc, x=x)
assert np.allclose(by_rows(A=Acsr, x=x).to_numpy(), by_cols(A=Acsc, x=x).to_numpy())
Compare(by_rows.trace, by_cols.trace, labels=("CSR, order i, j", "CSC, order j, i"), kind="cfir",
        run_a=lambda: by_rows(A=Acsr, x=x), run_b=lambda: by_cols(A=Acsc, x=x))"""),
    ("md", """## Exercise

Which loop orders are legal for `C[i, j] = A[i, j] + B[j, i]` with `A` CSR and `B` CSC? Try both
orders and fill in `legal`. (Hint: `B[j, i]` in CSC is stored with `i` outside.)"""),
    ("code", """legal = {("i", "j"): True, ("j", "i"): False}
for order, expected in legal.items():
    try:
        ss.lower("C[i, j] = A[i, j] + B[j, i]", A="csr", B="csc", options={"order": list(order)})
        ok = True
    except ss.StrategyError:
        ok = False
    assert ok == expected, (order, ok)
print("correct")"""),
]
