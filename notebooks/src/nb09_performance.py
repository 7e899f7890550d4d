"""09: performance."""

NAME = "09-performance.ipynb"

CELLS = [
    ("md", """# Performance: sparsescope against scipy and numpy

Generated kernels are plain C compiled with the system compiler (`-O3 -march=native`), called
through cffi.
This notebook times a few kernels against scipy.sparse and dense numpy with `explorer.compare`:
each call is repeated until a sample takes about 20 ms, several samples are taken, and the table
gives the median, the minimum, the spread (IQR) and each baseline's time relative to the kernel
(`2.00x` = twice as slow as the kernel). Results agree before they are timed.

Timings depend on your machine; nothing here asserts a speed. The kernel call includes Python
work (binding tensors to arguments, building the result tensor): a few microseconds that matter
only for small inputs. A scipy matrix can be passed to a kernel as it is: one in the kernel's layout
is read in place, and one that differs only in index dtypes (scipy's int32 indices for a kernel
lowered for `"csr"`, int64) runs a kernel lowered once for its layout, also in place; another
layout (COO for a CSR kernel) is converted at every call, and the kernel's trace says so in a
`foreign-layout` step."""),
    ("code", """import numpy as np
import scipy.sparse as sp
from IPython.display import HTML, display

import compiler as ss
from compiler.levels import Dense, Element, SparseBand
from compiler.looplets import compile_program, loop_program
from explorer import compare

rng = np.random.default_rng(0)
as_array = lambda v: v.to_numpy() if isinstance(v, ss.Tensor) else v.toarray() if sp.issparse(v) else v

def close(got, ref):
    # a sparse result is compared entry by entry: made dense, a 20k x 20k SpGEMM is 3.2 GB
    as_scipy = lambda v: v.to_scipy() if isinstance(v, ss.Tensor) and v.ndim == 2 else v
    if sp.issparse(as_scipy(ref)) and sp.issparse(as_scipy(got)):
        a, b = as_scipy(got).tocsr(), as_scipy(ref).tocsr()
        a.eliminate_zeros(), b.eliminate_zeros()
        a.sort_indices(), b.sort_indices()
        return (a.shape == b.shape and np.array_equal(a.indptr, b.indptr)
                and np.array_equal(a.indices, b.indices) and np.allclose(a.data, b.data))
    return np.allclose(as_array(got), as_array(ref))

def random_csr(n, per_row, seed):
    # an n x n CSR matrix with about per_row random entries per row (duplicates summed)
    r = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = r.integers(0, n, n * per_row)
    return sp.csr_matrix((r.random(n * per_row), (rows, cols)), shape=(n, n))

def show(title, result):
    assert all(result.checks.values()), result.checks
    display(HTML(f"<h4>{title}</h4>" + result.html()))"""),
    ("md", """## SpMV as the matrix grows

`ss.Tensor.from_scipy(S)` (and `ss.asarray(S)`) share `S`'s arrays, with no copy. scipy may write
them in place (`S.sort_indices()`, `S.indices[0] = ...`), so a kernel call reads them through
one check first, in C: every index in range, every row in order. `copy=True` gives the tensor its
own arrays instead, sealed read-only, which kernels read with no check: the tensors timed here are
such copies, and the row "shared with S" times the same kernel over the shared arrays (the
difference is that check: one pass over the matrix). A kernel lowered for the shared tensor itself
does better where its work does not depend on the order of a row's indices, as a SpMV's does not:
it checks each index as it reads it, and the call checks the row starts alone (the row "lowered
for S in place"; `kernel.coordinates_checked` names such inputs). Or seal `S`'s own index arrays,
with no copy: `ss.Tensor.from_scipy(S).seal()` makes `S.indices` and `S.indptr` read-only (scipy
still reads them; a write in place raises), and no call checks them again, whether given the
tensor or `S` itself (the row "S sealed, given itself"; its values are still looked at where the
kernel depends on them)."""),
    ("code", """for n in (1_000, 10_000, 100_000):
    S = random_csr(n, 10, seed=1)
    A, x = ss.Tensor.from_scipy(S, name="A", copy=True), rng.random(n)
    shared = ss.Tensor.from_scipy(S, name="A")
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    k_in_place = ss.lower("y[i] = A[i, j] * x[j]", A=shared, x=x)
    assert k_in_place.coordinates_checked == {"A"} and not k.coordinates_checked
    sealed = S.copy()   # (S itself stays writeable for the cells below)
    ss.Tensor.from_scipy(sealed).seal()
    assert not sealed.indices.flags.writeable
    base = {"shared with S": lambda: k(A=shared, x=x), "lowered for S in place": lambda: k_in_place(A=shared, x=x),
            "S sealed, given itself": lambda: k(A=sealed, x=x), "scipy": lambda: S @ x}
    if n <= 1_000:   # (dense, n = 10,000 is 800 MB)
        D = S.toarray()
        base["numpy (dense)"] = lambda: D @ x
    show(f"SpMV, n = {n:,}, {S.nnz:,} non-zeros", compare(lambda: k(A=A, x=x), base, repeats=5, check=close))"""),
    ("md", """## Lattice or looplets?

The two strategies emit different C for the same SpMV; compare them directly."""),
    ("code", """S = random_csr(20_000, 20, seed=2)
A, x = ss.Tensor.from_scipy(S, name="A", copy=True), rng.random(20_000)
k_lat = ss.lower("y[i] = A[i, j] * x[j]", strategy="lattice", A=A, x=x)
k_loop = ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x)
show("SpMV, lattice vs looplets", compare(lambda: k_lat(A=A, x=x), {"looplets": lambda: k_loop(A=A, x=x),
                                                                 "scipy": lambda: S @ x},
                                          repeats=5, name="lattice", check=close))"""),
    ("md", """The lattice kernel's row loop starts with two `__builtin_prefetch` lines: each row asks for
the entries 64 past its end, in the arrays its inner loop streams (`A1_idx` and `A_val`). Rows of
ten or twenty entries are too short for the CPU's own prefetcher to get ahead of them; fetching
ahead made CSR SpMV about 8% faster on a 100k x 100k matrix with 1M entries. `x` is not fetched
ahead: its reads are scattered. (The looplets kernel reads the same rows without these lines.)"""),
    ("code", """lines = k_lat.c_source.splitlines()
at = next(n for n, line in enumerate(lines) if "__builtin_prefetch" in line)
print("\\n".join(lines[at - 2:at + 6]))
print([s.note for s in k_lat.trace.steps if s.stage == "prefetch"])"""),
    ("md", """## Element-wise addition of sparse matrices (a merge)"""),
    ("code", """SA, SB = random_csr(5_000, 10, seed=3), random_csr(5_000, 10, seed=4)
A, B = ss.Tensor.from_scipy(SA, name="A", copy=True), ss.Tensor.from_scipy(SB, name="B", copy=True)
k = ss.lower("C[i, j] = A[i, j] + B[i, j]", A=A, B=B, C="csr")
show("CSR + CSR into CSR", compare(lambda: k(A=A, B=B), {"scipy": lambda: SA + SB}, repeats=5, check=close))"""),
    ("md", """## SpGEMM on all cores

`parallelize(i)` runs the rows of SpGEMM on OpenMP threads. Each thread gets its own workspace,
and the CSR result is assembled in two phases: every row counts its products (a bound of its
entries, read from B's row lengths), then fills its entries from its start, and a last pass
moves the rows down over the room they did not fill. Counting and moving are work the one-pass kernel does not do, so the
parallel kernel gains less than the number of cores over it. scipy runs on one core. (On a
machine without OpenMP the schedule is refused with the reason.)

Both kernels also fetch B's rows ahead: the row of B that `A`'s entry four places on will pick
is requested while the current one is worked on, as the CPU cannot guess which row comes next.
This made SpGEMM 16% faster on a 20k x 20k matrix with 100k entries."""),
    ("code", """import os
SG = random_csr(20_000, 5, seed=5)
G = ss.Tensor.from_scipy(SG, name="A", copy=True)
k_one = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=G, B=G, C="csr")
runs = {"one thread": lambda: k_one(A=G, B=G), "scipy": lambda: SG @ SG}
lines = k_one.c_source.splitlines()
at = next(n for n, line in enumerate(lines) if "ahead reads" in line)
print("\\n".join(lines[at:at + 6]))
try:
    k_all = ss.lower("C[i, j] = A[i, k] * B[k, j]", A=G, B=G, C="csr",
                     options={"schedule": [("parallelize", "i")]})
    print(k_all.trace.find("privatize")[0].note)
    show(f"SpGEMM on {os.cpu_count()} cores", compare(lambda: k_all(A=G, B=G), runs, repeats=5,
                                                      name="parallelize(i)", check=close))
except ss.CompileError as e:
    print(e)"""),
    ("md", """## Structure pays: a banded matrix

A banded matrix stored as `SparseBand` rows is read by random access within each band, with no
index array per entry. Compare it with the same matrix in CSR, and with scipy's DIA and CSR."""),
    ("code", """n, b = 20_000, 4
offsets = list(range(-b, b + 1))
SD = sp.diags([rng.random(n - abs(o)) + 0.5 for o in offsets], offsets, format="csr")
x = rng.random(n)
band = ss.Tensor.from_scipy(SD, name="A").asformat(ss.Format(Dense(SparseBand(Element(0.0)))))
csr = ss.Tensor.from_scipy(SD, name="A", copy=True)

@loop_program
def spmv(y, A, x):
    y[...] = 0
    for i in _:
        for j in _:
            y[i] += A[i, j] * x[j]

xt = ss.Tensor.from_numpy(x, "dense")
k_band = compile_program(spmv, y="dense", A=band, x=xt)
k_csr = compile_program(spmv, y="dense", A=csr, x=xt)
dia = SD.todia()
show("banded SpMV", compare(lambda: k_band(A=band, x=xt), {"looplets, CSR": lambda: k_csr(A=csr, x=xt),
                                                          "scipy CSR": lambda: SD @ x, "scipy DIA": lambda: dia @ x},
                            repeats=5, name="looplets, SparseBand", check=close))"""),
    ("md", """Part of the band's advantage is that each row's values sit at consecutive addresses, and so do
the `x` entries they meet. The compiler marks such a sum loop `#pragma omp simd reduction(+:...)`:
the C compiler may keep one partial sum per SIMD lane instead of waiting for each add to finish
(only the rounding changes). The CSR loop reads `x` through the column indices and is left as
written: in SIMD lanes it would need *gathers*, which cost more than they save. The C compiler
(GCC) is told to vectorize only the loops marked so, since left to itself it vectorizes the CSR
loop with gathers, about 15% slower. Find the marked loop:"""),
    ("code", """lines = k_band.c_source.splitlines()
at = next(n for n, line in enumerate(lines) if "#pragma omp simd" in line)
print("\\n".join(lines[at:at + 4]))
print("CSR kernel marked too?", "#pragma" in k_csr.c_source)"""),
    ("md", """## Exercise

Time SpMV on a matrix of your own (try `sp.random(..., density=...)` at different densities).
At which density does dense numpy overtake the sparse kernel on your machine?"""),
    ("code", """n = 2_000
for density in (0.001, 0.01, 0.1, 0.5):
    S = sp.random(n, n, density=density, format="csr", random_state=5)
    A, x, D = ss.Tensor.from_scipy(S, name="A", copy=True), rng.random(n), S.toarray()
    k = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    r = compare(lambda: k(A=A, x=x), {"numpy (dense)": lambda: D @ x}, repeats=3, check=close)
    print(f"density {density:5}: dense numpy is {r.rows[1].ratio:.2f}x the kernel's time")"""),
]
