"""04: looplets."""

NAME = "04-looplets.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# Looplets

The lattice strategy sees every level as a list of coordinates. **Looplets** (Ahrens, Donenfeld,
Kjolstad and Amarasinghe, 2023) describe a fiber by its *structure* instead: a `Sequence` of
`Phase`s, each a `Run` of one value, a `Spike` (a run then one special value), a `Stepper` that
repeats a smaller looplet, or a `Lookup` that can be read at any coordinate. A level format says
how to **unfurl** one of its fibers into such a nest, and the compiler lowers the nests of all
operands of a loop *together*, one rule per looplet kind, simplifying the code as it goes.

| looplet | meaning | lowered to |
| --- | --- | --- |
| `Lookup(i -> v(i))` | random access | a `for` loop, or nothing when another operand drives |
| `Run(v)` / `Fill(v)` | the same value on the whole extent | the value, substituted |
| `Spike(body, tail)` | a run, then one last value | the body on `[start, stop - 1)`, the tail at `stop - 1` |
| `Sequence(Phase...)` | consecutive pieces | one block per phase, extents truncated |
| `Stepper(chunk, next)` | repeats `chunk` | a `while` loop stepping to the next stop |
| `Thunk(preamble, body)` | set-up code | the preamble, hoisted |
| `Jumper(body, next)` | a Stepper that leads (galloping) | a `while` loop stepping to the *largest* stop |
| `AcceptRun` | an output storing a region as one run | one write for the whole region |"""),
    ("code", """import numpy as np
from IPython.display import HTML, display

import compiler as ss
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseList, SparsePoint,
                             SparseRunList)
from compiler.looplets import compile_program, loop_program
from explorer import render_artifact
from widgets import Explorer"""),
    ("md", """## The nest of a SparseList fiber

A `SparseList` fiber is a phase of spikes (fill up to each stored coordinate, then its value)
ending at the last stored coordinate, then fill to the end."""),
    ("code", """kernel = ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets", A="csr", x="dense")
nests = {a.name: a for s in kernel.trace.find("unfurl") for a in s.artifacts}
print(list(nests))
row = next(a for name, a in nests.items() if name.startswith("A.lvl1"))   # a row of A
print(row.text)
display(HTML(render_artifact(row)))"""),
    ("md", """## The lowering rules, step by step

Every rule application is a step of the trace, named `lower:<Looplet>`. Filter the explorer by
*stage lower* to follow them; the looplet being lowered is highlighted in the drawing."""),
    ("code", """rules = [s for s in kernel.trace.stages() if s.startswith("lower:")]
print(sorted(set(rules)))"""),
    ("code", """view = Explorer(kernel.trace)
view.filter.value = "stage:lower"
view"""),
    ("md", """## The simplifier

After each rule the program is simplified by term rewriting: a multiplication by a fill of zero
vanishes, a run of an addition of zero is dropped, constant conditions fold. Each rewrite is kept
as (rule, before, after):"""),
    ("code", """rewrites = [r for s in kernel.trace.find("simplify") for r in s.rewrites]
for r in rewrites[:8]:
    print(f"{r.rule:28} {r.before}  ->  {r.after}")
assert rewrites"""),
    ("md", """## A band times a list: the dot product of the Looplets paper

`A` is a SparseList, `B` a SparseBand. Walking both would be wasteful: the band is one block, so
the compiler steps through the list's entries and **locates** each in the band by random access,
the example of Figure 1 of the paper: `C = 3.0 * 3.7 + 2.7 * 4.7 = 23.79`."""),
    ("code", """@loop_program
def dot(C, A, B):
    for i in _:
        C += A[i] * B[i]

A = ss.Tensor.from_numpy(np.array([0, 1.9, 0, 3.0, 2.7, 0, 0, 0, 5.5, 0, 0]), SparseList(Element(0.0)))
B = ss.Tensor.from_numpy(np.array([0, 0, 0, 3.7, 4.7, 9.2, 1.5, 8.7, 0, 0, 0]), SparseBand(Element(0.0)))
k = compile_program(dot, C=Element(0.0), A=A, B=B)
result = k(A=A, B=B)
assert abs(result - 23.79) < 1e-12
print(round(result, 6))"""),
    ("code", """print(k.c_source)"""),
    ("code", """for s in k.trace.find("unfurl"):
    for a in s.artifacts:
        print(a.name); print(a.text); print()"""),
    ("md", """## Writing runs: run-length images in, run-length image out

Looplets work on the *write* side too. A `RunList` output unfurls to `AcceptRun`: when every read
of the loop is constant over a region (both images are in a run), the body is lowered **once** for
the whole region and the output stores one run; equal neighbouring runs merge. Blending two
run-length images therefore costs time in the number of runs, not pixels: there is no loop over
pixels in the C."""),
    ("code", """def rle_image(h, w):
    img = np.zeros((h, w))
    for r in range(h):
        c = 0
        while c < w:
            run = int(rng.integers(2, 9))
            img[r, c:c + run] = rng.integers(0, 4)
            c += run
    return img

rng = np.random.default_rng(0)
a, b = rle_image(4, 60), rle_image(4, 60)
img_a = ss.Tensor.from_numpy(a, Dense(RunList(Element(0.0))))
img_b = ss.Tensor.from_numpy(b, Dense(RunList(Element(0.0))))

@loop_program
def blend(C, A, B):
    for i in _:
        for j in _:
            C[i, j] = 0.5 * A[i, j] + 0.5 * B[i, j]

k_blend = compile_program(blend, C=Dense(RunList(Element(0.0))), A=img_a, B=img_b)
img_c = k_blend(A=img_a, B=img_b)
assert np.allclose(img_c.to_numpy(), 0.5 * a + 0.5 * b)
assert "for (int64_t j" not in k_blend.c_source
print("pixels:", a.size, " runs in A, B, C:", len(img_a.vals), len(img_b.vals), len(img_c.vals))
print([s.note for s in k_blend.trace.find("lower:AcceptRun")][:2])"""),
    ("md", """## Writing structure: blocks, bands, points and coordinate lists

Every level a loop can read it can also write, in index order. A `SparseBlockList` row starts a new
block at an index that does not follow the last one written; a `SparseBand` row runs from its first
written index to its last, and the indices between that were not written are stored as the fill; a
`SparseCOO` level appends whole coordinate tuples. `SparsePoint` and `SparseInterval` hold at most
one entry (or run) per row: a program that writes more gets an error, not a wrong tensor."""),
    ("code", """grid = np.zeros((3, 12))
grid[0, 2:5] = [1.0, 2.0, 3.0]; grid[0, 8] = 4.0; grid[1, 6] = 5.0
G = ss.Tensor.from_numpy(grid, "csr")   # not A: the exercises below use A, B and k

@loop_program
def copy(C, G):
    C[...] = 0.0
    for i in _:
        for j in _:
            C[i, j] = G[i, j]

for level in (SparseBlockList, SparseBand):
    out = compile_program(copy, C=Dense(level(Element(0.0))), G=G)(G=G)
    assert np.array_equal(out.to_numpy(), grid)
    print(level.__name__, {k: v.tolist() for k, v in out.levels[1].arrays().items()}, "values:", out.vals.tolist())
try:
    compile_program(copy, C=Dense(SparsePoint(Element(0.0))), G=G)(G=G)
except ss.FormatError as e:
    print("SparsePoint:", e)"""),
    ("md", """## Galloping: a Jumper leads

`A[gallop(i)]` unfurls a sorted level to a **Jumper**: coiterated with others, the operand with
the *largest* next coordinate sets the step and the rest skip ahead by exponential search. Two
galloping operands intersect by mutual lookahead, which is what makes triangle counting fast on
skewed graphs. Every level stored as sorted segments gallops: entries (SparseList, SparseHash,
SparseByteMap), runs (SparseRunList) and blocks (SparseBlockList)."""),
    ("code", """@loop_program
def dot_gallop(s, x, y):
    for i in _:
        s += x[gallop(i)] * y[gallop(i)]

x = np.zeros(1000); x[[3, 500, 501, 998]] = 1.0
y = np.zeros(1000); y[::2] = 2.0
X = ss.Tensor.from_numpy(x, SparseList(Element(0.0)))
Y = ss.Tensor.from_numpy(y, SparseRunList(Element(0.0)))
k_gallop = compile_program(dot_gallop, s=Element(0.0), x=X, y=Y)
assert float(k_gallop(x=X, y=Y)) == x @ y
print(x @ y, "| galloping seek called in the C:", " = seek_int64(x" in k_gallop.c_source)"""),
    ("md", """## Exercises

**1.** Is there a loop over the band in the band-list kernel? (Answer: no `for` loop at all: only
the walk over the list's entries, and a galloping search that skips to the band's start.)
**2.** Lower the same dot product with both operands as SparseLists. Does the C now merge two lists?"""),
    ("code", """assert "for (" not in k.c_source

B_list = B.asformat(ss.Format(SparseList(Element(0.0))))
k_list = compile_program(dot, C=Element(0.0), A=A, B=B_list)
assert abs(k_list(A=A, B=B_list) - 23.79) < 1e-12
print("while loops with two lists:", k_list.c_source.count("while"))"""),
]
