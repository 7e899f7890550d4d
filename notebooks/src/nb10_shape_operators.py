"""10: shape operators (BURRITO): reshape, concatenate and slice sparse arrays, fused."""

NAME = "10-shape-operators.ipynb"
# (its Explorers are drawn from the stored state when opened, before any cell runs)
WIDGET_STATE = True

CELLS = [
    ("md", """# Shape operators: reshape, concatenate and slice, fused

Dense arrays reshape and slice for free: only the metadata changes. A sparse array stores its
coordinates, so a reshape or a concatenation moves every stored entry, and sparse libraries provide
only a few hand-written kernels for them, converting formats around the rest. *Compilation of Shape
Operators on Sparse Arrays* (Root et al., OOPSLA 2024; its compiler is called BURRITO) calls shape
operators "the type casts of array programming" and compiles them like any other operator, so
that they **fuse** with the computation around them.

This notebook works through the paper's three motivating examples:

1. a stacked matrix-vector product, `y = [A; B; C] x` (constraint matrices stacked in a simulation);
2. a linear layer on a flattened matrix, `y = W vec(X)` (a reshape in a neural network);
3. a 2-D slice of a 3-D tensor, `Y = T[:, i, :]` (one slice of a volume).

Each is written twice: with the array language (`compiler.asarray`, `concat`, `reshape`,
slicing, `compute`), and in index notation with the paper's shape operators (`collapse`, `split`,
`concat`, `slice`, `broadcast`). We compare the fused kernel with unfused code (each operator
computed on its own) and look at every stage in the explorer."""),
    ("code", """import numpy as np
import scipy.sparse as sp
from IPython.display import HTML, display

import compiler as ss
from compiler import array as xp
from compiler.lattice.seqderive import seq_evaluate, seq_lower
from explorer import compare, explore, render_step
from widgets import Explorer

rng = np.random.default_rng(0)

def random_csr(rows, cols, per_row, seed):
    \"\"\"A rows x cols CSR matrix with about per_row random entries per row (duplicates summed).\"\"\"
    r = np.random.default_rng(seed)
    i = np.repeat(np.arange(rows), per_row)
    j = r.integers(0, cols, rows * per_row)
    return sp.csr_matrix((r.random(rows * per_row), (i, j)), shape=(rows, cols))

def dense(v):
    return v.to_numpy() if isinstance(v, ss.Tensor) else v.toarray() if sp.issparse(v) else np.asarray(v)

def close(got, ref):
    return np.allclose(dense(got), dense(ref))"""),
    ("md", """## 1. Stacked SpMV: `y = [A; B; C] x`

`ss.asarray` wraps scipy matrices and numpy arrays without copying. Operators build a lazy
expression; `compute()` lowers the **whole** expression as one kernel, and `ss.lower(expression)`
gives that kernel and its trace. The first step of the trace, `array`, holds the one index-notation
statement the expression became: the concatenation is a `concat` inside the sum, so no stacked
matrix is ever built. Given no strategy, the kernel is the lattice strategy's (BURRITO's sequence
expressions, below) where it lowers the statement, else the looplets'; the `strategy` step says
which and why. The `index-dtype` step says which index dtype the sparse result takes: int32 where
its extents and the most entries it can hold fit, as scipy chooses for its own results (so does
index notation given a shorthand output such as `C="csr"`). A CSC's rows sliced or stacked come back
in CSC, as scipy's do; a stack of matrices neither all CSR nor all CSC (a CSR with a COO, a CSC
with a CSR) comes back in COO, as scipy's `sp.vstack([csr, coo])` and `sp.vstack([csc, csr])` do."""),
    ("code", """n = 20_000
A, B, C = random_csr(n, n, 10, 1), random_csr(n // 2, n, 10, 2), random_csr(n // 4, n, 10, 3)
x = rng.random(n)
a, b, c, v = (ss.asarray(A, name="A"), ss.asarray(B, name="B"), ss.asarray(C, name="C"),
              ss.asarray(x, name="x"))

y = xp.concat([a, b, c], axis=0) @ v
fused = ss.lower(y)
expected = sp.vstack([A, B, C]) @ x
assert close(fused(), expected)
print(fused.trace.find("array")[0].after_text)
print([s.stage for s in fused.trace][:5])
print(fused.strategy, "|", fused.trace.find("strategy")[0].note)"""),
    ("md", """The same statement in index notation: `concat((A[k, j], B[l, j], C[m, j]), (k, l, m) -> i)`
stacks the rows (`k`, `l`, `m` continue one another into `i`), and `broadcast(i, x[j])` repeats `x`
along the rows, as the paper writes it. Shape inference (the paper's Fig. 9) gives every index its
extent and checks each operator's premise; the trace's `shapes` step holds them."""),
    ("code", """# NBVAL_CHECK_OUTPUT
program = "y[i] = sum[j](concat((A[k, j], B[l, j], C[m, j]), (k, l, m) -> i) * broadcast(i, x[j]))"
k_notation = ss.lower(program, A=A, B=B, C=C, x=x)
assert close(k_notation(A=A, B=B, C=C, x=x), expected)
shapes = k_notation.trace.find("shapes")[0]
print(shapes.note)
for op in shapes.data["operators"]:
    print(op["kind"], "->", op["rule"])"""),
    ("md", """A premise that fails is an error in the paper's terms, naming the operator and the index
(here the operands have different numbers of columns):"""),
    ("code", """# NBVAL_CHECK_OUTPUT
try:
    ss.lower("y[i] = sum[j](concat((A[k, j], B[l, j]), (k, l) -> i) * broadcast(i, x[j]))",
             A=A, B=random_csr(10, 7, 2, 4), x=x)
except ss.ShapeError as e:
    print(e)"""),
    ("md", """### Fused against unfused

Unfused code computes the stacked matrix first (one kernel, a CSR matrix of 35,000 rows) and then
multiplies it (a second kernel), as a library does. Fused, the SpMV reads `A`, `B` and `C` where
they are: one loop per operand, each writing its own rows of `y`. Most of the unfused time is its
first kernel, which allocates and fills a new 350,000-entry matrix on every call. (Timings depend
on your machine; nothing here asserts a speed.)"""),
    ("code", """stack = xp.concat([a, b, c], axis=0).lower()        # kernel 1: the stacked matrix
S = stack()
spmv = (ss.asarray(S, name="S") @ v).lower()         # kernel 2: its SpMV
print(spmv.trace.find("array")[0].after_text)

def unfused():
    return spmv(**{name: (stack() if name != "x" else x) for name in spmv.formats if name != "out"})

assert close(unfused(), expected)
result = compare(fused, {"unfused (stack, then SpMV)": unfused,
                         "scipy (vstack, then @)": lambda: sp.vstack([A, B, C], format="csr") @ x},
                 repeats=5, name="fused", check=close)
assert all(result.checks.values())
display(HTML(result.html()))"""),
    ("md", """Where does a fused kernel keep the operands apart? Lowered with looplets, the `concat`
becomes one loop per operand (the `shape-operators` step); the `B` loop writes `y` shifted by
`A`'s rows (an `offset` wrapper). Step through the explorer below: the `array` step draws the array
expression, `shapes` tabulates the extents with the operator marked in the statement (hover it for
its premise), `shape-operators` shows the loop program it became, and the C pane shows the kernel.
(The lattice strategy's kernel above keeps them apart by its lattice: the next section.)"""),
    ("code", """looped = ss.lower(y, strategy="looplets")
assert close(looped(), expected)
print(looped.trace.find("shape-operators")[0].after_text)"""),
    ("code", """Explorer(looped)"""),
    ("md", """### The sequence layer: the lattice strategy's half of the paper

Under the lattice strategy the paper derives, for each loop, a **sequence expression** (its
Fig. 11): the rows of a concatenation are a disjoint union `⊔` of the operands' row sequences, and
the columns of each row are the union of whichever operand's row is live. Lattices with **edge
sequences** (Figs. 12 and 13) and the **CFIR** follow. `seq_lower` records each stage and
`seq_evaluate` runs the CFIR in its interpreter; `ss.lower(..., strategy="lattice")` emits C from
the same CFIR. On a small example:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
Ps = ss.Tensor.from_numpy(np.array([[0, 1.0, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), "csr")
Qs = ss.Tensor.from_numpy(np.array([[6.0, 0, 0, 7]]), "coo")
xs = np.arange(4.0)
small = "yv[l] = sum[i](concat((P[j, i], Q[k, i]), (j, k) -> l) * broadcast(l, x[i]))"
low = seq_lower(small, P=Ps, Q=Qs, x=xs)
print(low.cin)
print(low.trace.stages())
assert np.allclose(seq_evaluate(small, P=Ps, Q=Qs, x=xs), np.vstack([Ps.to_numpy(), Qs.to_numpy()]) @ xs)"""),
    ("md", """`ss.lower(..., strategy="lattice")` records the same stages and goes on to C. The
`seq-derive` step draws each loop's derivation as a tree (each node with the Fig. 11 rule that
fired); each `lattice` step draws a lattice whose dotted edge is the concatenation's (running out of
`P`'s rows leads to `Q`'s, offset by `|j_P|`); `cfir` (where the explorer below opens) shows one
`while` loop per lattice point, and `emit-c` the C made from them. Click a line of the C pane: the
CFIR loop, the lattice point and the derivation's box it came from are outlined on their steps
(pick a tag in the provenance menu to see all of its parts):"""),
    ("code", """k_lat = ss.lower(small, strategy="lattice", P=Ps, Q=Qs, x=xs)
lattice_view = Explorer(k_lat)
lattice_view.goto(k_lat.trace.stages().index("cfir"))
lattice_view"""),
    ("md", """The C has one `while` loop per lattice point, as the `cfir` step printed them; it is
checked here against the interpreter and against the looplets' kernel:"""),
    ("code", """k_loop = ss.lower(small, strategy="looplets", P=Ps, Q=Qs, x=xs)
assert np.allclose(k_lat(P=Ps, Q=Qs, x=xs).to_numpy(), seq_evaluate(small, P=Ps, Q=Qs, x=xs))
assert np.allclose(k_loop(P=Ps, Q=Qs, x=xs).to_numpy(), seq_evaluate(small, P=Ps, Q=Qs, x=xs))
print([s.stage for s in k_lat.trace][-6:])
print(sum(line.lstrip().startswith("while") for line in k_lat.c_source.splitlines()), "while loops in the lattice C")"""),
    ("md", """## 2. A linear layer on `vec(X)`

`reshape(X, (n*m,))` of a CSR matrix is a row-major **collapse**: `collapse(X[k, l], (k, l) -> j)`
numbers `X[k, l]` as `j = k*m + l`. Fused into `W @ vec(X)`, each stored entry of `X` is read once
and multiplied by its column of `W`; no flattened vector is built."""),
    ("code", """rows, cols, out_features = 200, 300, 16
Xs = random_csr(rows, cols, 3, 5)
W = rng.random((out_features, rows * cols))
w, X = ss.asarray(W, name="W"), ss.asarray(Xs, name="X")

layer = w @ xp.reshape(X, (rows * cols,))
k_layer = ss.lower(layer)
print(k_layer.trace.find("array")[0].after_text)
want = W @ Xs.toarray().ravel()
assert close(k_layer(), want)

flatten = xp.reshape(X, (rows * cols,)).lower()        # unfused: the flattened vector first
flat = flatten()
print(flat)
matvec = (w @ ss.asarray(flat, name="v")).lower()

def unfused_layer():
    return matvec(**{name: (W if name == "W" else flatten()) for name in matvec.formats if name != "out"})

assert close(unfused_layer(), want)
result = compare(k_layer, {"unfused (flatten, then matvec)": unfused_layer,
                           "numpy (dense X)": lambda: W @ Xs.toarray().ravel()},
                 repeats=5, name="fused", check=close)
assert all(result.checks.values())
display(HTML(result.html()))"""),
    ("md", """In index notation the flattening is `collapse`, and its inverse is `split`
(`v.reshape(n, m)`); their premises are `|j| = |k|·|l|`. Under the looplets strategy a split reads
`v[l + k*m]`: row `k + 1`'s window of `v` starts where row `k`'s ends, so `v`'s cursor is declared
once, before the rows, and each row's walk starts where the last stopped (the trace's `carry`
step): the split is one pass over `v`:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
k_collapse = ss.lower("y[o] = sum[j](W[o, j] * collapse(X[k, l], (k, l) -> j))", W=W, X=Xs)
assert close(k_collapse(W=W, X=Xs), want)
print(k_collapse.trace.find("shapes")[0].data["operators"][0]["rule"])
grid = ss.einsum("g[i, j] = split(v[k], k -> (i, j:4))", v=np.arange(12.0))
print(grid.to_numpy())"""),
    ("md", """## 3. A 2-D slice of a 3-D tensor

`T[:, 1, :]` of a tensor stored as CSF is a **constant index** in index notation,
`T[i, 1, j]`: the kernel locates coordinate 1 of the middle level under each `i` and copies the
fiber below it (under the lattice strategy, the length-1 slice `m_T[1:2]` in a product with `i`'s
level). A strided slice (`T[::2, 1, :]`) adds a `slice` on the first mode, and a negative step
(`T[::-2, 1, :]`) walks the first level from its end, so the rows still come out in order. All
stay one kernel over `T`'s stored entries."""),
    ("code", """dims = (60, 40, 50)
T_dense = np.where(rng.random(dims) < 0.02, rng.random(dims), 0.0)
T = ss.Tensor.from_numpy(T_dense, "csf", name="T")
t = ss.asarray(T, name="T")

plane = t[:, 1, :]
k_plane = ss.lower(plane)
print(k_plane.trace.find("array")[0].after_text)
assert np.allclose(plane.compute().to_numpy(), T_dense[:, 1, :])

strided = t[::2, 1, :]
print(ss.lower(strided).trace.find("array")[0].after_text)
assert np.allclose(strided.compute().to_numpy(), T_dense[::2, 1, :])

backwards = t[::-2, 1, :]
k_back = ss.lower(backwards)
print(k_back.strategy, "|", k_back.trace.find("seq-derive")[0].data["loops"])
assert np.allclose(backwards.compute().to_numpy(), T_dense[::-2, 1, :])"""),
    ("md", """What no shape operator of index notation says is **materialized**: computed on its
operands' stored entries before the kernel runs, and the trace says where and why, in a
`materialize` step (and the `array` step's drawing dashes that node). An integer index of an
*expression* (not of a stored tensor) is one:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
expr = (t * 2.0)[:, 1, :] + 1.0
k_expr = ss.lower(expr)
assert np.allclose(expr.compute().to_numpy(), (T_dense * 2.0)[:, 1, :] + 1.0)
for s in k_expr.trace:
    if s.stage in ("materialize", "array"):
        print(s.stage, "|", s.note.splitlines()[0][:110])"""),
    ("code", """view = explore(k_expr)   # (the array step: its drawing dashes what was materialized)
display(HTML(render_step(view.step(view.artifacts("array-expression")[0][0]), linked=True)))"""),
    ("md", """## 4. A roll is a concatenation of two slices

`xp.roll(v, k)` is `concat([v[-k:], v[:-k]])`, and the Fourier transform extension's `fftshift`
(the zero frequency moved to the middle) is a roll by half of each extent: one kernel over the
stored entries, as sparse as its operand. A transform itself is dense (every frequency mixes every
entry), so `xp.fft.fft` computes its operand by its own kernel, runs numpy's FFT on it, and the
trace of what follows says where it materialized."""),
    ("code", """# NBVAL_CHECK_OUTPUT
spikes = xp.asarray(ss.Tensor.from_numpy(np.array([0, 0, 3.0, 0, 0, 0, 1.0, 0]), "sparse", name="v"))
shifted = xp.fft.fftshift(spikes * 2.0)
print(ss.lower(shifted).trace.find("array")[0].after_text)
out = shifted.compute()
print(out.format, out.nnz, out.to_numpy())

power = xp.abs(xp.fft.fft(spikes * 2.0)) ** 2
for s in ss.lower(power).trace:
    if s.stage == "materialize":
        print(s.note.splitlines()[0][:100], "...")
print(np.round(power.compute().to_numpy(), 3))"""),
    ("md", """## 5. Many parts: one loop until all ran out

The rows of `hstack([A, B])` are the **union** of the operands' rows, and the paper's lattice of a
union of `n` levels has `2^n - 1` points: one loop for each set of operands still present, each
holding the code of the parts there, so the C grows as `2^n`. Where each operand feeds only its own
part of the result, as the parts of a concatenation do, the lattice strategy runs **one** loop
instead, at the least row any operand has left, until all of them ran out (Finch's stepper): the
`lattice` step draws its one point and the `cfir` step prints `until all ran out`. Two operands
keep the paper's three loops (longer, but the loop left once one operand ran out tests nothing);
from three on the loop is merged, and the C grows by one part per operand:"""),
    ("code", """# NBVAL_CHECK_OUTPUT
parts = [random_csr(6, 4, 1, 10 + k).tocoo() for k in range(5)]
for count in (2, 3, 5):
    k_join = ss.lower(xp.concat([ss.asarray(m, name="ABCDE"[k]) for k, m in enumerate(parts[:count])], axis=1),
                      strategy="lattice")
    assert close(k_join(), sp.hstack(parts[:count]))
    rows = k_join.trace.find("lattice")[0]
    print(f"{count} parts: {rows.note}, {len(k_join.c_source.splitlines())} lines of C")
print(k_join.trace.find("cfir")[0].after_text.splitlines()[0])"""),
    ("md", """## Exercises

**1.** Write `np.hstack([A, B])` (of two matrices with as many rows) in index notation, with
`concat` on the second mode into a CSR output, and check it against `sp.hstack`. **2.** The paper's
Fig. 26c: a strided row slice of a CSR matrix times another CSR matrix, `a[::2] * d` for a `d` with
half as many rows; time it fused against slicing first. **3.** In the explorer of section 1, find
the C lines that read the rows of `C`: pick a looplet on `m` in the provenance menu."""),
]
