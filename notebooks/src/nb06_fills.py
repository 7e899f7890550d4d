"""06: fill values and user functions."""

NAME = "06-fill-values-and-user-functions.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# Fill values and user functions

"Sparse" means *mostly one value*, and that value need not be zero. Every sparsescope tensor has
a **fill value**, every operator knows its algebraic properties (identity, annihilator,
commutativity, ...), and the compiler derives from them which coordinates a kernel must visit and
the fill value of the result (Henry, Hsu, Kjolstad et al., 2021: *sparse array programming*).
You can add your own operators, with their properties, as **user functions**."""),
    ("code", """import math

import numpy as np

import compiler as ss
from compiler.levels import Element, SparseList
from widgets import Explorer

inf = math.inf
rng = np.random.default_rng(5)
sv = ss.sparse_vector
def check(program, out=None, functions=None, **tensors):
    \"\"\"Lower and run with the lattice strategy, compare with the dense oracle, return the result.\"\"\"
    outs = {} if out is None else {program.split("[")[0].strip(): out}
    kernel = ss.lower(program, functions=functions, **tensors, **outs)
    got = kernel(**tensors)
    want, fill = ss.evaluate(program, functions=functions, **tensors)
    assert np.allclose(got.to_numpy(), want, equal_nan=True)
    assert got.fill == fill or (got.fill != got.fill and fill != fill)   # the result's fill too (NaN is NaN)
    return kernel, got, fill"""),
    ("md", """## The result's fill value

With `b` sparse around 3 and `c` around 5 (integers), `b ^ c` is 6 wherever both are unstored:
the result is sparse around 6. The compiler computes that fill and only visits coordinates
where either input is stored."""),
    ("code", """# NBVAL_CHECK_OUTPUT
b = ss.Tensor.from_numpy(np.array([3, 3, 1, 3, 3, 7, 3, 3]), sv(fill=3, dtype="int64"), name="b")
c = ss.Tensor.from_numpy(np.array([5, 2, 5, 5, 5, 5, 5, 9]), sv(fill=5, dtype="int64"), name="c")
kernel, a, fill = check("a[i] = b[i] ^ c[i]", b=b, c=c)
print("fill of the result:", fill)
print(a.to_numpy())"""),
    ("md", """## Min-plus: shortest paths around infinity

In the tropical semiring `(min, +)` the "zero" is `inf`: `inf + x = inf` (an annihilator of `+`)
and `min(inf, x) = x` (the identity of `min`). A distance matrix stored sparse around `inf`
gives one relaxation step of Bellman-Ford: `d'[i] = min_j (D[i, j] + d[j])`."""),
    ("code", """D = np.full((5, 5), inf)
for i, j, w in [(0, 1, 2.0), (1, 2, 1.0), (0, 3, 7.0), (3, 4, 1.0), (2, 4, 3.0), (1, 0, 2.0)]:
    D[j, i] = w                           # D[to, from]: an edge from -> to of weight w
np.fill_diagonal(D, 0.0)
Dt = ss.Tensor.from_numpy(D, ss.csr(fill=inf), name="D")
d = np.array([0.0, inf, inf, inf, inf])   # distances from vertex 0
for _ in range(4):
    kernel, d_next, fill = check("d[i] = min[j](D[i, j] + x[j])", D=Dt, x=ss.Tensor.from_numpy(d, ss.dense(1, fill=inf)))
    d = d_next.to_numpy()
print(d)
assert d.tolist() == [0.0, 2.0, 3.0, 7.0, 6.0] and fill == inf"""),
    ("code", """print(kernel.trace.find("lattice")[-1].artifact("lattice").text)
Explorer(kernel.trace)"""),
    ("md", """## Reductions over the fill

`max[j](A[i, j])` over a matrix sparse around 0 must count the zeros: a row of negative entries
that misses a coordinate has maximum 0. Since 0 is not the identity of `max` (that is `-inf`),
every coordinate takes part, and a plain lattice sweeps all of `j` (a 100k-column matrix would
cost 100k steps per row). The compiler instead iterates the stored entries only and folds the
fill in after the loop: once if the row misses a coordinate, as `max` is idempotent; for `+`, the
fill times the count of missing coordinates. The lattice step records the rewrite `fold-fill`.
A column max, `y[j] = max[i](A[i, j])`, folds per column: the loop over `j` counts, per column,
the rows that stored an entry there, and the columns that missed a row take the fill at the end.
The looplets strategy does the same (`compiler.looplets.counted_gaps`): each row's walk over its
entries counts them per column (`j_entries[j]`), and one loop after the rows makes `y[j] max= 0`
where a row did not store `j`, instead of visiting every gap of every row; a sum's gaps add the fill
times the count (`y[j] += (j_walks - j_entries[j]) * 5.0` for a matrix stored around 5). A reduction
of every entry, `s[] = max[i, j](A[i, j])`, walks all the stored values as one vector
(`compiler.looplets.flat_reductions`, the trace's `ravel` step) and folds the fill once."""),
    ("code", """# NBVAL_CHECK_OUTPUT
M = np.array([[-1.0, 0.0, -2.0], [-3.0, -4.0, -5.0]])
A = ss.Tensor.from_numpy(M, "csr", name="A")
kernel, y, _ = check("y[i] = max[j](A[i, j])", A=A)
print(y.to_numpy())
print(kernel.trace.find("cfir")[0].after_text)
lines = kernel.c_source.splitlines()
at = next(n for n, line in enumerate(lines) if "j_missing =" in line)
print("\\n".join(lines[at:at + 4]))
ones = ss.Tensor.from_numpy(np.array([[1.0, 5.0, 1.0, 1.0]]), ss.csr(fill=1.0), name="A")
_, y, fill = check("y[i] = A[i, j]", A=ones)
print(y.to_numpy(), "fill", fill)   # (a row of four fills sums to 4)"""),
    ("md", """## When `0 * x` is not 0: NaN, infinities and overflow

A product visits only where an operand of fill 0 is stored, because `0 * x` is 0, but only for a
finite `x`: `0 * inf` and `0 * NaN` are NaN. So every tensor knows which non-finite values it holds,
and how large a finite one may be (`Tensor.value_facts`): two such values may multiply past the
largest double (`1e200 * 1e200` is `inf`). Here `x * y` may overflow, so `x * y * 0` is computed
where both are stored, and is NaN there, as numpy's is. The trace's `value-facts` step says which
path each product takes, and why. With values under 2^64 every product takes the sparse path."""),
    ("code", """# NBVAL_CHECK_OUTPUT
x = ss.Tensor.from_numpy(np.array([0.0, 2.0, 0.0, 1e200]), sv(), name="x")
y = ss.Tensor.from_numpy(np.array([5.0, 3.0, 0.0, 1e200]), sv(), name="y")
print("x:", x.value_facts, "| y:", y.value_facts)
with np.errstate(over="ignore", invalid="ignore"):   # (the dense oracle overflows too, as it should)
    kernel, z, fill = check("z[i] = x[i] * y[i] * 0", x=x, y=y)
print(z.to_numpy())
for step in kernel.trace.find("value-facts"):
    for r in step.rewrites:
        print(f"{r.rule:11} {r.before:16} {r.after}")"""),
    ("md", """A kernel computing in float32 overflows much sooner: float32's largest value is about 3.4e38, so
`1e19 * 1e19 * 1e19` is already `inf`. The facts of a float32 tensor are measured in its own steps
(under 2^8, 2^16, 2^32, 2^64 or any float32), and a float32 kernel takes a product past 2^128 to be
possibly infinite: `a * a * a * w` is NaN where `a` stores 1e19 and `w` stores nothing, as numpy's is."""),
    ("code", """# NBVAL_CHECK_OUTPUT
a = ss.Tensor.from_numpy(np.array([1e19, 2.0, 0.0], dtype=np.float32), "sparse_vector", name="a")
w = ss.Tensor.from_numpy(np.array([0.0, 0.0, 4.0], dtype=np.float32), "sparse_vector", name="w")
print("a:", a.value_facts, "up to 2 **", a.value_facts.scale, "| w: up to 2 **", w.value_facts.scale)
with np.errstate(over="ignore", invalid="ignore"):
    kernel, v, fill = check("v[i] = a[i] * a[i] * a[i] * w[i]", a=a, w=w)
print(v.to_numpy(), v.dtype)"""),
    ("md", """## User functions with properties

`user_function(name, python, c_body, ...)` defines an operator: a Python implementation (the
oracle), a C body, and the properties the compiler may use. Here `absmax` has identity 0, so a
reduction with it may skip every unstored zero."""),
    ("code", """absmax = ss.user_function("absmax", lambda x, y: max(abs(x), abs(y)),
                          "return fabs(x) > fabs(y) ? fabs(x) : fabs(y);",
                          identity=0.0, commutative=True, associative=True)
M = rng.random((6, 7)) * (rng.random((6, 7)) < 0.4) - 0.2 * (rng.random((6, 7)) < 0.2)
A = ss.Tensor.from_numpy(M, "csr", name="A")
kernel, y, _ = check("y[i] = absmax[j](A[i, j])", functions={"absmax": absmax}, A=A)
assert np.allclose(y.to_numpy(), np.abs(M).max(axis=1))
print(y.to_numpy())"""),
    ("md", """## Cheaper bodies for the cases where an operand is absent

In a lattice case where some operands are absent, they hold their fill. A user function may give
a cheaper body for such a case (the paper's `x,0 => { return abs(x); }`): `cases` maps the case,
written as the paper does (`"x,0"`: `x` present, `y` absent as 0), or as the present parameters
alone (`("x",)`: the others absent as 0), to C code of the present parameters only. The lattice
strategy emits the case's body only where the absent operands' fills are the values the case was
written for (a `b` stored around 1 is absent as 1, and `gcd(x, 1)` is not `abs(x)`), and the
general body elsewhere; the oracle still runs the whole function, so a wrong case body is caught
by the comparison."""),
    ("code", """gcd = ss.user_function(
    "gcd", math.gcd,
    "x = x < 0 ? -x : x; y = y < 0 ? -y : y; "
    "while (x != 0) { int64_t t = x; x = y % x; y = t; } return y;",
    algebra="x | y", commutative=True,
    cases={"x,0": "return x < 0 ? -x : x;", "0,y": "return y < 0 ? -y : y;"})
a = ss.Tensor.from_numpy(np.array([0, 12, -7, 0, 9, 0]), "sparse_vector", name="a")
b = ss.Tensor.from_numpy(np.array([0, 18, 0, -5, 6, 0]), "sparse_vector", name="b")
kernel, c, _ = check("c[i] = gcd(a[i], b[i])", functions={"gcd": gcd}, a=a, b=b)
print(c.to_numpy())
print(kernel.trace.find("lattice")[0].artifact("lattice").text)
assert "= ss_gcd_x_int64(" in kernel.c_source"""),
    ("md", """## Masked update: compute only where a mask is not set

`y[i] = A[i, :] @ x where !m[i]` is written with a user function `mask(v, m)` whose explicit
iteration algebra `x & !y` says: the result is the fill where `m` is set, so those rows need not
be computed at all. The lattice at `i` contains an **omitter** point: the case `A ∩ m` that is
skipped. Complements like `!m` are the generalization that the fill-value paper adds to TACO."""),
    ("code", """mask = ss.user_function("mask", lambda v, m: 0.0 if m else v, "return y ? 0.0 : x;",
                        algebra="x & !y", dtype="float64")
A = ss.Tensor.from_numpy(rng.random((9, 7)) * (rng.random((9, 7)) < 0.4), "csr", name="A")
x = rng.random(7)
m = ss.Tensor.from_numpy(rng.random(9) < 0.4, sv(fill=False, dtype="bool"), name="m")
kernel, y, _ = check("y[i] = mask(A[i, j] * x[j], m[i])", functions={"mask": mask}, A=A, x=x, m=m)
assert np.allclose(y.to_numpy(), np.where(m.to_numpy(), 0.0, A.to_numpy() @ x))
lattice_i = kernel.trace.find("lattice")[0].artifact("lattice").text
assert "omit" in lattice_i
print(lattice_i)"""),
    ("md", """## Coordinates as values, and 0-d tensors

An index written as a value is its coordinate (TACO's issue 514): `B[i, j] * i` scales row `i` by
`i`. It has no fill of its own (it differs at every coordinate), so the fill algebra decides what
the kernel visits: `B * i` is 0 wherever `B` (fill 0) stores nothing, so only `B`'s entries are
computed; `B + j` differs from every fill, so every coordinate is. A 0-d tensor is read as `s[]`,
a kernel argument read once before the loops."""),
    ("code", """from compiler.lattice.algebra import derive
from compiler.notation import parse

B = ss.Tensor.from_numpy(np.array([[0, 2.0, 0], [1.0, 0, 3.0]]), "csr", name="B")
for program in ["C[i, j] = B[i, j] * i", "C[i, j] = B[i, j] + j"]:
    space = derive(parse(program).rhs, lambda acc: B.fill)[0]
    kernel, C, _ = check(program, out="csr", B=B)
    print(f"{program:24} iterates {space}, stores {C.nnz} entries")
kernel, y, _ = check("y[i] = B[i, j] * s[]", B=B, s=2.5)
print(y.to_numpy())"""),
    ("md", """## Selections: a conditional visits only its branches

`ifelse(c, x, y)` is `x` or `y`, whichever `c` picks. Its condition below compares coordinates
(`j <= i`, a lower triangle): it has no fill, so by the rules above every `(i, j)` would be
visited. But where `x` and `y` hold one fill, the result holds it too, whatever `c` says: the
function *selects* (`selects=(1, 2)`, the positions of its branches), and the algebra of the call
is the union of its branches alone. `xp.tril` and `xp.triu` are built so, with the array
language's `where`."""),
    ("code", """body = "return x ? y : z;"
ifelse = ss.user_function("ifelse", lambda c, x, y: x if c else y, body, arity=3, selects=(1, 2))
blind = ss.user_function("blind", lambda c, x, y: x if c else y, body, arity=3)
M = rng.random((6, 6)) * (rng.random((6, 6)) < 0.3)
B = ss.Tensor.from_numpy(M, "csr", name="B")
for f in (blind, ifelse):
    program = f"C[i, j] = {f.name}(j <= i, B[i, j], 0.0)"
    rules = []
    space, _ = derive(parse(program, {f.name: f}).rhs, lambda acc: B.fill, rules)
    print(f"{f.name:7} iterates {space}   (rule: {rules[-1].split(':')[0]})")
kernel, C, _ = check("C[i, j] = ifelse(j <= i, B[i, j], 0.0)", out="csr", functions={"ifelse": ifelse}, B=B)
assert np.array_equal(C.to_numpy(), np.tril(M)) and C.nnz == np.count_nonzero(np.tril(M))"""),
    ("md", """## Complex values, and a fill of NaN+NaNj

`complex64` and `complex128` are value dtypes like the others: a scipy complex matrix is read in
place, and the C holds `double _Complex` values (C99's `<complex.h>`). The fill algebra is the
same: a vector stored around NaN+NaNj (any NaN part is one NaN), doubled, is NaN+NaNj wherever it
stores nothing, so the kernel visits its two entries only, and skips a result that is the fill
(`!(v != v)`: only a NaN differs from itself). What complex numbers have no meaning for (an order:
`max`, `<`, `sort`) is refused before any C is written."""),
    ("code", """import scipy.sparse as sp

S = sp.random(6, 6, density=0.3, random_state=3, format="csr") * (1 + 2j)   # a complex CSR
xc = np.exp(1j * np.arange(6.0))
for strategy in ("lattice", "looplets"):
    k = ss.lower("y[i] = A[i, j] * x[j]", strategy, A=S, x=xc)
    assert np.allclose(k(A=S, x=xc).to_numpy(), S @ xc)
print("\\n".join(line for line in k.c_source.splitlines() if "_Complex" in line))"""),
    ("code", """nan2 = complex(np.nan, np.nan)
z = np.full(6, nan2)
z[[1, 4]] = [1 + 1j, 2 - 1j]
Z = ss.Tensor.from_numpy(z, sv(fill=nan2, dtype="complex128"), name="z")
kernel, w, fill = check("w[i] = z[i] * 2.0", out=sv(fill=nan2, dtype="complex128"), z=Z)
print(f"z stores {Z.nnz} entries, w stores {w.nnz}; the fill of w: {fill}")
print("\\n".join(line for line in kernel.c_source.splitlines() if "for (" in line or "!= v" in line))
try:
    ss.lower("m[] = max[i](z[i])", z=Z)
except ss.errors.DTypeError as e:
    print("refused:", e)"""),
    ("md", """## Exercises

**1.** A vector `b` is stored sparse around `2.0`. What is the fill value of `a[i] = b[i] * b[i]`?
**2.** Which fill does `a[i] = max(b[i], c[i])` have when `b` is sparse around 1 and `c` around 4?"""),
    ("code", """b = ss.Tensor.from_numpy(np.array([2.0, 2.0, 5.0, 2.0]), sv(fill=2.0), name="b")
my_answer_1 = 4.0
assert check("a[i] = b[i] * b[i]", b=b)[2] == my_answer_1

b1 = ss.Tensor.from_numpy(np.array([1.0, 3.0, 1.0, 1.0]), sv(fill=1.0), name="b")
c4 = ss.Tensor.from_numpy(np.array([4.0, 4.0, 9.0, 4.0]), sv(fill=4.0), name="c")
my_answer_2 = 4.0
assert check("a[i] = max(b[i], c[i])", b=b1, c=c4)[2] == my_answer_2
print("both correct")"""),
]
