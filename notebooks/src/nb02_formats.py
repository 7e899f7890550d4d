"""02: level formats and fiber trees."""

NAME = "02-formats-and-fiber-trees.ipynb"

CELLS = [
    ("md", """# Level formats and fiber trees

A tensor in sparsescope is a **fiber tree**: each mode of the tensor is stored by one *level*,
outermost first, and the last level is a *leaf* holding the values. A level format decides what is
stored for its mode: every coordinate (`Dense`), only the non-fill ones (`SparseList`), one
contiguous band (`SparseBand`), a list of blocks (`SparseBlockList`), ... This is the level
abstraction of TACO (Chou et al., 2018) and Finch (Ahrens et al., 2023).

After this notebook you can read and build the arrays of the common formats, and choose a format
for a given sparsity structure."""),
    ("code", """import numpy as np
from IPython.display import HTML, display

import compiler as ss
from compiler.levels import Dense, Element, Pattern, SparseBand, SparseBlockList, SparseCOO, SparseList
from explorer import render_dot

M = np.array([[0, 1.0, 2.0, 0, 0],
              [0, 0,   0,   0, 0],
              [0, 0,   3.0, 4.0, 5.0]])

def arrays(T):
    \"\"\"Every level's arrays as lists, and the values.\"\"\"
    out = {f"{k}:{lvl.name}": {a: v.tolist() for a, v in lvl.arrays().items()} for k, lvl in enumerate(T.levels)}
    out["vals"] = T.vals.tolist()
    return out"""),
    ("md", """## CSR: Dense over SparseList

`Dense` stores nothing but its size: fiber `i` of the next level is at position `i`.
`SparseList` stores, per fiber, a segment `pos[p] : pos[p+1]` of coordinates `idx` (half-open, as
everywhere in sparsescope)."""),
    ("code", """# NBVAL_CHECK_OUTPUT
A = ss.Tensor.from_numpy(M, Dense(SparseList(Element(0.0))), name="A")   # the same as ss.csr()
print(A.format == ss.csr(), A.format.shorthand)
print(arrays(A))
print(A.fiber_tree_text())"""),
    ("code", """display(HTML(render_dot(A.fiber_tree_dot())))   # drawn in the page's theme"""),
    ("md", """## Other orders and compressions

* **CSC** is the same levels with `mode_order=(1, 0)`: columns outside, rows inside.
* **DCSR** compresses the rows too, so empty row 1 disappears.
* **COO** stores all coordinates of an entry in one `SparseCOO` level."""),
    ("code", """# NBVAL_CHECK_OUTPUT
for fmt in ["csc", "dcsr", "coo"]:
    T = A.asformat(fmt)
    assert (T.to_numpy() == M).all()
    print(f"{fmt:5}", T.format, arrays(T))"""),
    ("code", """display(HTML(render_dot(A.asformat("dcsr").fiber_tree_dot())))"""),
    ("md", """A format prints as its levels' constructors. That text is a format too: wherever a format is
taken (`asformat`, `from_numpy`, `lower`, the command line's `--format A=...`), so is the text,
read without running it as Python."""),
    ("code", """# NBVAL_CHECK_OUTPUT
text = str(A.asformat("csc").format)
print(text)
print(ss.parse_format(text) == ss.csc(), A.asformat("SparseList(SparseList(Element(0.0)))").format.shorthand)"""),
    ("md", """## Building from coordinates

`Tensor.from_coords` takes the entries themselves, in any order: `coords[m][e]` is entry `e`'s
coordinate in mode `m` (pydata/sparse's `COO(coords, data, shape)`). Duplicates are summed, as in
scipy.sparse. Nothing of the whole tensor's size is built, so a hypersparse matrix of 10^12 x 10^12
fits in a few bytes as DCSR; `to_coords` gives the entries back."""),
    ("code", """# NBVAL_CHECK_OUTPUT
T = ss.Tensor.from_coords([[0, 2, 0, 1], [1, 0, 1, 1], [3, 3, 3, 0]], [1.0, 2.0, 0.5, 4.0],
                          shape=(3, 2, 4), format="csf", name="T")
print(T, T.to_coords())
H = ss.Tensor.from_coords([[10**11, 3], [7, 10**11]], [1.0, 2.0], shape=(10**12, 10**12), format="dcsr")
print(H.nnz, arrays(H))"""),
    ("md", """## Structured levels: bands and blocks

When the non-zeros of a fiber are contiguous, storing every coordinate is wasteful.
`SparseBand` stores one block per fiber: its end coordinate `idx` (exclusive) and where its values
start (`ofs`). `SparseBlockList` stores several blocks per fiber (Finch's "VBL"): `pos` over blocks,
each with its end `idx` and its value offset `ofs`."""),
    ("code", """# NBVAL_CHECK_OUTPUT
band = ss.Tensor.from_numpy(M, Dense(SparseBand(Element(0.0))), name="band")
blocks = ss.Tensor.from_numpy(M, Dense(SparseBlockList(Element(0.0))), name="blocks")
print(arrays(band))
print(arrays(blocks))"""),
    ("md", """## Pattern leaves and fill values

A `Pattern` leaf stores no values at all: every stored entry is `True`, the fill is `False`.
An `Element` leaf may have any fill value; entries equal to the fill are not stored."""),
    ("code", """# NBVAL_CHECK_OUTPUT
P = ss.Tensor.from_numpy(M != 0, Dense(SparseList(Pattern())), name="P")
print(P)
ones = ss.Tensor.from_numpy(np.array([1.0, 1.0, 7.0, 1.0]), SparseList(Element(1.0)), name="ones")
print(ones, arrays(ones))"""),
    ("md", """## Errors name the problem

Building a level by hand is checked: unsorted or out-of-range coordinates are reported with the
level and the fiber where they occur."""),
    ("code", """# NBVAL_CHECK_OUTPUT
try:
    ss.Tensor(SparseList(Element(0.0, [1.0, 2.0]), 4, pos=[0, 2], idx=[3, 1]))
except ss.FormatError as e:
    print(e)"""),
    ("md", """## Exercises

**1.** Write down the `pos` and `idx` arrays of `N` below in CSR, then check your answer.
**2.** How many values does `N` store as a `SparseBand` per row, and what are its `idx` (band ends)?"""),
    ("code", """N = np.array([[5.0, 0, 0, 0],
              [0,   0, 0, 0],
              [0,   6.0, 7.0, 0],
              [0,   0, 0, 8.0]])

# 1. your answer
my_pos, my_idx = [0, 1, 1, 3, 4], [0, 1, 2, 3]
Ncsr = ss.Tensor.from_numpy(N, "csr")
assert Ncsr.levels[1].pos.tolist() == my_pos and Ncsr.levels[1].idx.tolist() == my_idx

# 2. your answer: rows store 1, 0, 2, 1 values; the bands end at 1, ?, 3, 4
Nband = ss.Tensor.from_numpy(N, Dense(SparseBand(Element(0.0))))
ofs, ends = Nband.levels[1].ofs.tolist(), Nband.levels[1].idx.tolist()
assert [b - a for a, b in zip(ofs, ofs[1:])] == [1, 0, 2, 1]
assert [ends[0], ends[2], ends[3]] == [1, 3, 4]
print("correct! an empty band stores", ends[1], "as its end")"""),
]
