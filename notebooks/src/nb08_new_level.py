"""08: writing and debugging a new level format."""

NAME = "08-new-level-format.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# Writing and debugging a new level format

Level formats are the extension point of sparsescope: a new structure (a band, blocks, runs,
...) is a new level class plus, for each lowering strategy, the code that walks it. In this
notebook we write **`SparsePoint`**, Finch's level for fibers that hold *at most one* stored entry
(think of one-hot rows, permutation or assignment matrices), from scratch, as you would a format
of your own (sparsescope ships one, `compiler.levels.SparsePoint`; ours is a class of this
notebook), and debug it with the explorer.

A level needs three parts, each registered with its class:

1. **storage**: a `Level` subclass (arrays, conversion from coordinates, validation). We reuse
   SparseList's `pos`/`idx` arrays and only add the "at most one entry" rule;
2. **a looplet unfurl**: how one fiber reads as a looplet nest, registered with
   `compiler.looplets.levels.register_unfurl`;
3. **a lattice iterator**: how one fiber's coordinates are walked, bounded and descended from,
   registered with `compiler.lattice.iterators.register_iterator`.

Both strategies dispatch on the level class, nearest base first: a subclass has its parent's
unfurl and iterator until it registers its own. So our `SparsePoint`, a `SparseList`, lowers by
both strategies from its first line, read as a SparseList; sections 3 to 5 give it its own
looplets and its own lattice iterator."""),
    ("code", """from dataclasses import dataclass

import numpy as np

import compiler as ss
from compiler.errors import FormatError
from compiler.levels import Dense, Element, SparseList
from explorer import explore
from widgets import Explorer"""),
    ("md", """## 1. Storage"""),
    ("code", """@dataclass(frozen=True, eq=False, repr=False)
class SparsePoint(SparseList):
    \"\"\"At most one stored coordinate per fiber; stored like a SparseList (pos, idx).\"\"\"

    name = "SparsePoint"

    def spec(self):
        return SparsePoint(self.child.spec(), index_dtype=self.index_dtype)

    def format_key(self):
        return ("SparsePoint", self.index_dtype.name, self.child.format_key())

    def spec_str(self):
        return f"SparsePoint({self.child.spec_str()})"

    def _data_repr(self):
        return f"SparsePoint({self.child!r}, {self.size}, pos={self.pos.tolist()}, idx={self.idx.tolist()})"

    def from_entries(self, parent_count, parent_pos, coords, vals, sizes):
        built = SparseList.from_entries(self, parent_count, parent_pos, coords, vals, sizes)
        point = SparsePoint(built.child, built.size, built.pos, built.idx)
        point.check(parent_count, "SparsePoint")
        return point

    def check(self, parent_count, where):
        count = super().check(parent_count, where)
        crowded = np.flatnonzero(np.diff(self.pos) > 1)
        if len(crowded):
            raise FormatError(f"{where}: fiber {crowded[0]} stores {int(np.diff(self.pos)[crowded[0]])} "
                              f"entries; a SparsePoint fiber stores at most one")
        return count"""),
    ("code", """# NBVAL_CHECK_OUTPUT
onehot = np.array([[0, 0, 2.0, 0],
                   [0, 0, 0,   0],
                   [5.0, 0, 0, 0],
                   [0, 0, 0, 1.5]])
P = ss.Tensor.from_numpy(onehot, Dense(SparsePoint(Element(0.0))), name="P")
print(P)
print(P.fiber_tree_text())
try:
    ss.Tensor.from_numpy(np.ones((2, 2)), Dense(SparsePoint(Element(0.0))), name="Q")
except FormatError as e:
    print(e)"""),
    ("md", """## 2. Lowering before an unfurl of its own: the parent's

The looplet strategy finds a level's unfurl by its class, nearest base first, so our `SparsePoint`
(a `SparseList`) is read as a SparseList until it registers an unfurl of its own. The kernel is
right, but it walks each fiber's stored entries, a loop a SparsePoint does not need. Step to the
`unfurl` step of `j` in the explorer: the nest is a SparseList's. (The lattice strategy reads it
as a SparseList too, and is right: section 5.)"""),
    ("code", """SPMV = "y[i] = A[i, j] * x[j]"
x = np.array([1.0, 10.0, 100.0, 1000.0])

def build(trace):
    return ss.lower(SPMV, strategy="looplets", trace=trace, A=P, x=x)

session = explore(build, name="SparsePoint, read as a SparseList")
assert session.error is None
assert np.allclose(build(ss.Trace())(A=P, x=x).to_numpy(), onehot @ x)
Explorer(session)"""),
    ("md", """## 3. A first unfurl (with a bug)

A SparsePoint fiber is: fill up to its one coordinate, that entry, then fill to the end. In
looplets: a `Thunk` that reads the fiber's position and coordinate, then a `Sequence` of a `Phase`
holding a `Spike` (fill, then the entry as its *tail*) and a last `Phase` of fill. An empty fiber
gets an empty first phase, so nothing is read outside the arrays."""),
    ("code", """from compiler.imperative.ir import BinOp, Const, Declare, Load, Select, Var
from compiler.looplets import extents as X
from compiler.looplets.levels import SubFiber, fill_value, register_unfurl
from compiler.looplets.looplets import Fill, Phase, Sequence, Spike, Thunk

def child(f, pos):
    \"\"\"The sub-fiber at position ``pos`` of the next level.\"\"\"
    return SubFiber(f.tensor, f.level + 1, pos, f.mode, f.dirty)

def unfurl_point_buggy(f, ctx, mode):
    info, k = f.tensor, f.level
    pos, idx = info.array(k, "pos"), info.array(k, "idx")
    q, stop = Var(ctx.fresh("qP")), Var(ctx.fresh("stopP"))
    pre = (Declare(q, "int64", Load(pos, f.pos)),
           Declare(stop, "int64", Select(BinOp("<", q, Load(pos, X.add(f.pos, 1))),
                                         Load(idx, q),          # the spike's end ...
                                         Const(0, "int64"))))
    fill = Fill(fill_value(info))
    return Thunk(pre, Sequence((Phase(stop, Spike(fill, child(f, q))), Phase(None, fill))))

register_unfurl(SparsePoint, unfurl_point_buggy)
session = explore(build, name="SparsePoint, first try")
assert session.error is None
kernel = build(ss.Trace())
got, want = kernel(A=P, x=x).to_numpy(), onehot @ x
print("got ", got)
print("want", want)
assert not np.allclose(got, want)   # compiles, runs, and is wrong"""),
    ("md", """It compiles and runs, but the result is wrong: row 0 gives 20 (= 2 * x[1]) instead of 200
(= 2 * x[2]), and row 2 is lost. Step to the `unfurl` step of `j` in the explorer and read the
nest: the `Phase` ends at `stopP = idx[q]`, and a `Spike`'s tail is the **last** coordinate of its
extent, `stop - 1`. Extents are half-open, so the phase must end at `idx[q] + 1`. (Row 2's entry is
at coordinate 0: its phase `[0, 0)` is empty.)"""),
    ("code", """Explorer(session)"""),
    ("md", """## 4. The fix"""),
    ("code", """def unfurl_point(f, ctx, mode):
    info, k = f.tensor, f.level
    pos, idx = info.array(k, "pos"), info.array(k, "idx")
    q, stop = Var(ctx.fresh("qP")), Var(ctx.fresh("stopP"))
    pre = (Declare(q, "int64", Load(pos, f.pos)),
           Declare(stop, "int64", Select(BinOp("<", q, Load(pos, X.add(f.pos, 1))),
                                         X.add(Load(idx, q), 1),   # half-open: one past the entry
                                         Const(0, "int64"))))
    fill = Fill(fill_value(info))
    return Thunk(pre, Sequence((Phase(stop, Spike(fill, child(f, q))), Phase(None, fill))))

register_unfurl(SparsePoint, unfurl_point)
kernel = build(ss.Trace())
assert np.allclose(kernel(A=P, x=x).to_numpy(), onehot @ x)
want, _ = ss.evaluate(SPMV, A=P, x=x)
assert np.allclose(kernel(A=P, x=x).to_numpy(), want)
print(kernel(A=P, x=x).to_numpy())
print(kernel.c_source)"""),
    ("md", """No loop over the stored entries remains: each row is one test and one multiply. A larger
random check against the oracle, and against a CSR kernel:"""),
    ("code", """rng = np.random.default_rng(0)
n = 500
M = np.zeros((n, n))
rows = rng.choice(n, 400, replace=False)
M[rows, rng.integers(0, n, 400)] = rng.random(400) + 0.5
Pn = ss.Tensor.from_numpy(M, Dense(SparsePoint(Element(0.0))), name="A")
xn = rng.random(n)
k_point = ss.lower(SPMV, strategy="looplets", trace=ss.Trace(), A=Pn, x=xn)
assert np.allclose(k_point(A=Pn, x=xn).to_numpy(), M @ xn)
Explorer(k_point.trace)"""),
    ("md", """## 5. Under the lattice strategy: an iterator of its own

The lattice strategy walks each level with an **iterator** (TACO's mode capabilities): the range
of positions of a fiber (`bounds`), the coordinate at a position (`coord`), and, for the CFIR
interpreter that checks lattice kernels without C, the fiber's entries in Python (`py_fiber`).
Until we register one, our class has SparseList's, and the kernel is right already:"""),
    ("code", """from compiler.lattice.iterators import ModeIterator, iterator_factory, register_iterator

k_inherited = ss.lower(SPMV, strategy="lattice", trace=ss.Trace(), A=P, x=x)
assert np.allclose(k_inherited(A=P, x=x).to_numpy(), onehot @ x)
print(iterator_factory(SparsePoint).__name__)   # found through the class's bases: SparseList's"""),
    ("md", """An iterator of its own says what the level is: a fiber's positions are `pos[p]` to
`pos[p + 1]` (at most one), the coordinate is `idx[q]`, and it is *compressed* (sorted, unique, no
position per coordinate), so it merges, gallops and is bisected for a diagonal as a SparseList's.
Registered with the class, it names `SparsePoint` in the iteration graph and in every message."""),
    ("code", """from compiler.imperative.ir import BinOp, Load

class PointIterator(ModeIterator):
    \"\"\"A SparsePoint level: a SparseList's positions, at most one per fiber.\"\"\"

    def bounds(self, parent):
        pos = self.param("pos")
        return Load(pos, parent), Load(pos, BinOp("+", parent, 1))

    def py_fiber(self, arrays, sizes, parent):
        pos, idx = arrays[self.param("pos")], arrays[self.param("idx")]
        return [(int(idx[q]), q) for q in range(int(pos[parent]), int(pos[parent + 1]))]

def point_iterators(name, tensor, mode, level, lvl):
    # (what the level declares: compressed, its coordinates in idx; the class adds its bounds)
    return [PointIterator.of(name, tensor, mode, level, lvl)]

register_iterator(SparsePoint, point_iterators)

for program in (SPMV, "y[i] = A[i, i]", "C[i, j] = A[i, j] + B[i, j]"):
    tensors = {"A": P, "x": x} if "x[j]" in program else {"A": P, "B": P} if "B" in program else {"A": P}
    k_lat = ss.lower(program, strategy="lattice", trace=ss.Trace(), **tensors)
    k_loop = ss.lower(program, strategy="looplets", trace=ss.Trace(), **tensors)
    want, _ = ss.evaluate(program, **tensors)
    for k in (k_lat, k_loop):
        assert np.allclose(k(**tensors).to_numpy(), want), (program, k.strategy)
    print(f"{program:28} both strategies agree with the oracle")
k_lat = ss.lower(SPMV, strategy="lattice", trace=ss.Trace(), A=P, x=x)
print(k_lat.trace.find("iteration-graph")[0].artifacts[0].text)"""),
    ("md", """The same random check as in section 4, by the lattice strategy, and its lowering in
the explorer (the `lattice` and `cfir` steps, and the C with each line's lattice point):"""),
    ("code", """k_lat_n = ss.lower(SPMV, strategy="lattice", trace=ss.Trace(), A=Pn, x=xn)
assert np.allclose(k_lat_n(A=Pn, x=xn).to_numpy(), M @ xn)
Explorer(k_lat_n.trace)"""),
    ("md", """## 6. As an output, by both strategies

An output level is *written*: the looplets unfurl it in update mode and ask its **writer**
(`compiler.looplets.level_writers.register_output`) for its kernel parameters and its declare and
freeze statements; the lattice strategy asks its iterator whether it appends or inserts. Our
unfurl only reads, and our class stores what a SparseList stores, so both strategies write it as a
SparseList (the nearest base that writes) and give back a tensor of *our* class. A format with
arrays of its own registers `register_unfurl(cls, fn, updatable=True)` and a writer (the tests'
`Sorted` format in `tests/compiler/looplets/test_looplets_level_writers.py` is one)."""),
    ("code", """from compiler.format import Format

point_out = Format(Dense(SparsePoint(Element(0.0))))
for strategy in ("looplets", "lattice"):
    k_out = ss.lower("C[i, j] = A[i, j] * 2", strategy=strategy, A=Pn, C=point_out)
    C = k_out(A=Pn)
    assert type(C.levels[1]) is SparsePoint and np.allclose(C.to_numpy(), 2 * M)
    print(f"{strategy:9} wrote {C.nnz} entries into {C.format}: right")"""),
    ("md", """## Exercises

**1.** Use the new format in a loop program: the dot product of a SparsePoint vector with a dense
vector. **2.** A hand-built SparsePoint level is validated like any other: build one whose `idx` is
out of range and read the error (kernels lowered with `checked=True` re-validate inputs on every call)."""),
    ("code", """from compiler.looplets import compile_program, loop_program

@loop_program
def dot(s, a, b):
    for i in _:
        s += a[i] * b[i]

a = ss.Tensor.from_numpy(np.array([0, 0, 4.0, 0, 0]), SparsePoint(Element(0.0)))
b = ss.Tensor.from_numpy(np.arange(5.0), "dense")
k = compile_program(dot, s=Element(0.0), a=a, b=b)
assert k(a=a, b=b) == 8.0

bad = SparsePoint(Element(0.0, np.array([1.0])), 5, pos=np.array([0, 1]), idx=np.array([7]))
try:
    ss.Tensor(bad)
except FormatError as e:
    print(e)"""),
]
