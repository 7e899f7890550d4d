"""05: the Finch language."""

NAME = "05-finch-language.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# The Finch language: loops with control flow

Index notation says *what* to compute. Finch's loop language (Ahrens et al., 2023) lets you say
more: loops in a chosen order, `if` conditions on indices, `let` bindings, offsets and padding
in subscripts, any reduction operator. sparsescope embeds it in Python: decorate a function with
`@loop_program`; `for i in _:` loops over the whole extent of `i`; `y[i] += ...` accumulates.
`compile_program` lowers it with looplets (`lower(..., strategy="looplets")` accepts loop programs
too).

| syntax | meaning |
| --- | --- |
| `y[...] = 0` | initialize the whole output |
| `for i in _:` | loop over the extent of `i` (inferred from the tensors) |
| `if i <= j:` | run the body only where the condition holds |
| `A[~(i + j - 1)]` | offset access, *permissive*: out of range gives `missing` |
| `coalesce(a, b)` | the first operand that is not missing (padding!) |
| `y[i] <<= op, v` | reduce with any operator |
| `A[2:5][i]`, `swizzle(A, 1, 0)[i, j]` | a window of `A` (numpy slices); a lazy transpose |
| `p=ShortCircuitScalar(-1)` | a scalar temporary whose reduction stops at the operator's annihilator |
| `def k(_F, P, F, A, V):` writing `_F` and `P` | several outputs: the kernel returns a named tuple |"""),
    ("code", """import numpy as np

import compiler as ss
from compiler.levels import Element, SparseList
from compiler.looplets import ShortCircuitScalar, compile_program, loop_program
from widgets import Explorer

rng = np.random.default_rng(3)
def sparse(shape, density):
    return rng.random(shape) * (rng.random(shape) < density)"""),
    ("md", """## SpMV as a loop program, both loop orders

With CSC storage the column loop must be outside: the loop order follows storage (the
`concordize` pass checks accesses are in storage order)."""),
    ("code", """@loop_program
def spmv(y, A, x):
    y[...] = 0
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]

@loop_program
def spmv_by_columns(y, A, x):
    y[...] = 0
    for j in _:
        for i in _:
            y[i] += A[i, j] * x[j]

M = sparse((6, 8), 0.3)
x = ss.Tensor.from_numpy(rng.random(8), "dense")
for prog, fmt in ((spmv, "csr"), (spmv_by_columns, "csc")):
    A = ss.Tensor.from_numpy(M, fmt)
    k = compile_program(prog, y="dense", A=A, x=x)
    assert np.allclose(k(A=A, x=x).to_numpy(), M @ x.to_numpy())
print(spmv)"""),
    ("md", """## Control flow: the sum of the upper triangle

`if i <= j` is not evaluated per element: the compiler turns the condition into a *mask* looplet
(a `Sequence` of a run of `true` up to `j`, then `false`) and intersects it with the matrix's
looplets, so no loop ever visits the lower triangle. This is the Finch paper's first example."""),
    ("code", """@loop_program
def upper_triangle(s, A):
    s[...] = 0.0
    for j in _:
        for i in _:
            if i <= j:
                s += A[i, j]

M = sparse((6, 9), 0.5)
A = ss.Tensor.from_numpy(M, "csc")
k = compile_program(upper_triangle, s=Element(0.0), A=A)
assert np.isclose(k(A=A), np.triu(M).sum())
print(k.c_source)"""),
    ("code", """Explorer(k.trace)"""),
    ("md", """## Convolution with padding

`A[~(i + j - 1)]` reads `A` at an offset, and outside `A`'s range the access is *missing*;
`coalesce(..., 0.0)` turns missing into zero padding. The offset becomes a shift of `A`'s looplet
nest; no bounds test runs per element."""),
    ("code", """@loop_program
def conv(B, A, F):
    for i in _:
        for j in _:
            B[i] += coalesce(A[~(i + j - 1)], 0.0) * F[j]

a = sparse((15,), 0.4)
f = np.array([1.0, -2.0, 0.5])
A = ss.Tensor.from_numpy(a, SparseList(Element(0.0)))
F = ss.Tensor.from_numpy(f, "dense")
B = ss.Tensor.from_numpy(np.zeros(15), "dense")
k = compile_program(conv, B=B, A=A, F=F)
padded = np.concatenate([[0.0], a, [0.0]])
want = np.array([sum(padded[i + j] * f[j] for j in range(3)) for i in range(15)])
assert np.allclose(k(A=A, F=F).to_numpy(), want)
assert np.allclose(want, np.convolve(a, f[::-1], mode="same"))
print("convolution agrees with numpy")"""),
    ("md", """## Concatenation, let bindings and custom reductions"""),
    ("code", """@loop_program
def cat(C, A, B):
    for i in _:
        C[i] = coalesce(A[~i], B[~(i - 5)])

a, b = sparse((5,), 0.6), sparse((4,), 0.6)
A, B = (ss.Tensor.from_numpy(v, SparseList(Element(0.0))) for v in (a, b))
k = compile_program(cat, C=ss.Tensor.from_numpy(np.zeros(9), "dense"), A=A, B=B)
assert np.allclose(k(A=A, B=B).to_numpy(), np.concatenate([a, b]))

absmax = ss.user_function("absmax", lambda x, y: max(abs(x), abs(y)),
                          "return fabs(x) > fabs(y) ? fabs(x) : fabs(y);",
                          identity=0.0, commutative=True, associative=True)

@loop_program
def row_absmax(y, A):
    for i in _:
        for j in _:
            y[i] <<= absmax, A[i, j]

M = sparse((4, 6), 0.5) - 0.3
A = ss.Tensor.from_numpy(M, "csr")
k = compile_program(row_absmax, y="dense", A=A)
assert np.allclose(k(A=A).to_numpy(), np.abs(M).max(axis=1))
print("concatenation and absmax agree with numpy")"""),
    ("md", """Index notation says the same with a *shape operator* (BURRITO's `concat`; also `collapse`,
`split`, `slice` and `broadcast`). The looplets strategy turns it into a loop program: one loop
per operand, the second writing at an offset. The trace's `shapes` step gives each index's extent,
and its `shape-operators` step shows the loops."""),
    ("code", """Av, Bv = (ss.Tensor.from_numpy(v, SparseList(Element(0.0))) for v in (a, b))
k = ss.lower("C[l] = concat((A[i], B[j]), (i, j) -> l)", strategy="looplets", A=Av, B=Bv)
assert np.allclose(k(A=Av, B=Bv).to_numpy(), np.concatenate([a, b]))
steps = {s.stage: s for s in k.trace.steps}
print(steps["shapes"].note)
print(steps["shape-operators"].after)"""),
    ("md", """The lattice strategy lowers it the paper's way: the sequence `i_A ⊔ j_B` (Fig. 11), a lattice
whose second point `|i_A| + j_B` is not a sub-point (the loop is *fissioned*), the CFIR's two
`while` loops, then C through the iterator model (the trace's `seq-derive`, `lattice`, `cfir` and
`lower` steps). Its kernel is lowered for these shapes."""),
    ("code", """k = ss.lower("C[l] = concat((A[i], B[j]), (i, j) -> l)", strategy="lattice", A=Av, B=Bv)
assert np.allclose(k(A=Av, B=Bv).to_numpy(), np.concatenate([a, b]))
steps = {s.stage: s for s in k.trace.steps}
print(steps["cfir"].artifacts[0].text)
print(k.c_source[k.c_source.index("{"):])"""),
    ("md", """## Windows, lazy transposes and scalars that stop early

Slices work as in numpy and cost nothing: `A[1:-1][i]` shifts the loop instead of copying.
`swizzle(A, 1, 0)` reads a CSR matrix as its transpose (the compiler locates the discordant
reads). A `ShortCircuitScalar` temporary stops reducing once the value cannot change: the first
frontier parent of each vertex (a BFS *pull* step) breaks out of the row as soon as it is found."""),
    ("code", """@loop_program
def interior(y, A):
    for i in _:
        y[i] = A[1:-1][i] * 2.0

a = sparse((8,), 0.7)
A = ss.Tensor.from_numpy(a, SparseList(Element(0.0)))
k = compile_program(interior, y="dense", A=A)
assert np.allclose(k(A=A).to_numpy(), a[1:-1] * 2.0)

@loop_program
def first_parent(P, F, AT, p=ShortCircuitScalar(-1)):
    for i in _:
        p[...] = -1
        for j in _:
            if F[j] and AT[i, j]:
                p <<= choose(-1), j  # the first value other than -1
        P[i] = p

adj = (rng.random((6, 6)) < 0.4).astype(float)
AT = ss.Tensor.from_numpy(adj.T.copy(), "csr")
frontier = np.array([True, False, True, False, False, True])
k = compile_program(first_parent, P=ss.Tensor.from_numpy(np.zeros(6, dtype=np.int64), "dense"),
                    F=frontier, AT=AT)
parents = k(F=frontier, AT=AT).to_numpy()
want = [next((j for j in range(6) if frontier[j] and adj[j, i]), -1) for i in range(6)]
assert list(parents) == want
print("first parents:", parents, "| breaks early:", "break;" in k.c_source)"""),
    ("md", """## Index notation as a loop program: reductions anywhere, and early exits

Index notation lowered with looplets becomes a loop program. A reduction inside the right-hand
side, as in a residual `r = b - A x`, is hoisted into a scalar temporary computed in the loop
where its free indices are bound, as a Finch program writes it with a `Scalar` (the trace's
`hoist-reductions` step). A reduction by an operator with an annihilator (`any`, `all`, `min`,
`max`, `prod`) goes into a `ShortCircuitScalar`, so its loops break once the result is decided,
where that is exact for what the values may hold (`0 * NaN` is NaN)."""),
    ("code", """M = ss.Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr")
xs, bs = np.array([1.0, 2.0, 3.0]), np.array([5.0, 10.0])
k = ss.lower("r[i] = b[i] - A[i, j] * x[j]", strategy="looplets", A=M, b=bs, x=xs)
print(next(s for s in k.trace.steps if s.stage == "hoist-reductions").after)
assert np.allclose(k(A=M, b=bs, x=xs).to_numpy(), bs - M.to_numpy() @ xs)
k = ss.lower("s[] = any[i, j](A[i, j] > 2)", strategy="looplets", A=M)
print("any:", k(A=M).to_numpy(), "| breaks early:", "break;" in k.c_source)"""),
    ("md", """## Several outputs: Finch's BFS and Bellman-Ford

A program may write several tensors (Finch's multiple left-hand sides); each is an output in its
own format and fill, and the kernel returns them in a named tuple, in the order of the
parameters. The paper's graph case studies are written so in `compiler.looplets.case_studies`:
a BFS push step writes the next frontier `_F` (a byte map) and the parents `P`; a Bellman-Ford
round writes the distances `D` and the changed set `F`. The drivers run them until nothing
changes; scipy's csgraph agrees. A byte map declared first thing (`_F[...] = -1`) is started clear
by the runtime, not by the kernel's C, and a call may hand it an earlier result to write into,
`_F=ss.reuse(older)`, whose stored entries alone are cleared: the BFS driver writes each round into
the frontier before last, so a round costs its frontier's edges, not a pass over every vertex. A
byte map under Dense levels (`Dense(SparseByteMap)`, a batch of frontiers) is reused so too, each
row's entries cleared."""),
    ("code", """import scipy.sparse as sp
from scipy.sparse.csgraph import bellman_ford as scipy_bellman_ford
from compiler.looplets import case_studies

print(case_studies.bfs_push)   # the program, as Finch prints it
G = sp.random(40, 40, density=0.08, random_state=1, format="csr")
G.data = np.ceil(G.data * 9)
r = case_studies.bfs(G, 0)
print("levels:", r.levels[:12], "| rounds:", r.directions)
sp_ = case_studies.bellman_ford(G, 0)
assert np.array_equal(sp_.distances, scipy_bellman_ford(G, indices=0))
print("Bellman-Ford agrees with scipy after", sp_.rounds, "rounds")"""),
    ("md", """## Computed coordinates: scatters, gathers, histograms

A subscript may be computed from data: `y[I[i]] += x[i]` scatters, `y[i] = x[I[i]]` gathers,
`bins[v[i] // 10] += 1` counts. A loop index is in bounds by construction, a computed coordinate
only if the data says so: the kernel checks each one against its mode's extent where the access
runs, and one out of range raises a `KernelError` naming the line, the tensor, the value and the
extent, in every build (the accesses at loop indices stay unchecked)."""),
    ("code", """@loop_program
def histogram(bins, v):
    for i in _:
        bins[v[i] // 10] += 1

v = ss.Tensor.from_numpy(np.array([3, 15, 27, 12]), "dense")
bins = ss.Tensor.from_numpy(np.zeros(3, np.int64), "dense")
k = compile_program(histogram, bins=bins, v=v)
print(k(bins=bins, v=v).to_numpy())
try:
    k(bins=bins, v=ss.Tensor.from_numpy(np.array([3, 35]), "dense"))
except ss.errors.KernelError as e:
    print(e)"""),
    ("md", """## Exercises

**1.** Write a loop program for the sum of the *strict* lower triangle (`i > j`) of a CSR matrix.
**2.** Write `let`-style code: scale each row by `2 * x[i]` before accumulating into `y[j]`."""),
    ("code", """@loop_program
def strict_lower(s, A):
    s[...] = 0.0
    for i in _:
        for j in _:
            if i > j:
                s += A[i, j]

M = sparse((7, 7), 0.5)
A = ss.Tensor.from_numpy(M, "csr")
k = compile_program(strict_lower, s=Element(0.0), A=A)
assert np.isclose(k(A=A), np.tril(M, -1).sum())

@loop_program
def scaled(y, A, x):
    for i in _:
        xi = x[i] * 2.0
        for j in _:
            y[j] += A[i, j] * xi

x = ss.Tensor.from_numpy(rng.random(7), "dense")
k = compile_program(scaled, y="dense", A=A, x=x)
assert np.allclose(k(A=A, x=x).to_numpy(), 2 * x.to_numpy() @ M)
print("both correct")"""),
]
