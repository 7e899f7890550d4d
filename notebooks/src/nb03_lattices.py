"""03: iteration lattices and merge loops."""

NAME = "03-iteration-lattices.ipynb"
# (its widgets are drawn from the stored state when opened, before any cell runs: without it
# each read "Error displaying widget: model not found")
WIDGET_STATE = True

CELLS = [
    ("md", """# Iteration lattices and merge loops

To add two sparse vectors you walk both coordinate lists at once: a **merge loop**. Which lists
you must walk, and which cases arise inside the loop, follows from the *expression*: for
`b * c` only coordinates where both are stored matter (`0 * c = 0`), for `b + c` every coordinate
stored in either. TACO (Kjolstad et al., 2017) organizes these cases into an **iteration lattice**;
sparsescope builds one per loop, generalized to any operator and fill value (Henry et al., 2021),
and checks each lattice by brute force before using it.

Each lattice **point** lists the operands present in one case, with the expression that case
computes. Each **loop** iterates while some operands still have entries, and lists the points it
may meet."""),
    ("code", """import itertools

import numpy as np
from IPython.display import HTML, display

import compiler as ss
from explorer import render_artifact
from widgets import Explorer

sv = ss.sparse_vector()

def lattice_of(program, **formats):
    kernel = ss.lower(program, strategy="lattice", **formats)
    return kernel, kernel.trace.find("lattice")[-1].artifact("lattice")

def points(lattice):
    \"\"\"The operands of each lattice point, from the lattice's text.\"\"\"
    return [line[1:line.index("|")].split() for line in lattice.text.splitlines() if line.startswith("[")]"""),
    ("md", """## Intersection and union"""),
    ("code", """# NBVAL_CHECK_OUTPUT
for program in ["a[i] = b[i] * c[i]", "a[i] = b[i] + c[i]"]:
    _, L = lattice_of(program, b=sv, c=sv, a=sv)
    print(program, "->", points(L))"""),
    ("code", """_, L = lattice_of("a[i] = b[i] + c[i]", b=sv, c=sv, a=sv)
print(L.text)
display(HTML(render_artifact(L)))"""),
    ("md", """The union lattice has three points and three loops: while both vectors have entries, compare
coordinates and take the case `b c`, `b` or `c`; once one runs out, copy the rest of the other.
Here is that merge loop in the generated C (into a dense `a`, to keep it short):"""),
    ("code", """kernel, _ = lattice_of("a[i] = b[i] + c[i]", b=sv, c=sv)
print(kernel.c_source)
assert kernel.c_source.count("while (") == 3"""),
    ("md", """## `b * (c + d)`: the lattice of a compound expression

The lattice is built bottom-up: `c + d` is a union (`cd`, `c`, `d`), multiplying by `b` intersects
each point with `b`. So the points are **`bcd`, `bc`, `bd`**, and no case ever runs with `b` alone:
`b * (0 + 0) = 0`."""),
    ("code", """# NBVAL_CHECK_OUTPUT
kernel, L = lattice_of("a[i] = b[i] * (c[i] + d[i])", b=sv, c=sv, d=sv, a=sv)
print(points(L))"""),
    ("code", """print(L.text)
display(HTML(render_artifact(L)))"""),
    ("md", """## A brute-force check, by hand

Is that lattice right? Enumerate every combination of present and absent operands, put random
non-zero values where present and the fill (0) where absent, and see which combinations can give a
value different from the fill. Those regions are **needed**; a lattice must have a point for each
(the compiler runs this check itself on every lattice it builds, `options={"verify": True}` by
default)."""),
    ("code", """def needed_regions(f, names, trials=20, seed=0):
    rng = np.random.default_rng(seed)
    needed = []
    for present in itertools.product([False, True], repeat=len(names)):
        for _ in range(trials):
            values = [rng.uniform(-3, 3) if p else 0.0 for p in present]
            if f(*values) != 0.0:
                needed.append([n for n, p in zip(names, present) if p])
                break
    return needed

need = needed_regions(lambda b, c, d: b * (c + d), "bcd")
print(need)
assert sorted(map(sorted, need)) == sorted(map(sorted, points(L)))"""),
    ("md", """## The same, in the explorer

Step to the `lattice` stage to see the drawing; the CFIR step draws the three loops as a tree,
each `while` loop a rounded box under its `forall` with its cases below it, and the `lower` step
draws the imperative IR the same way (hover a box for its full text). A box and the C lines its
code became link both ways: clicking a C line fills the boxes that made it, clicking a box
outlines its C lines."""),
    ("code", """t = {n: ss.Tensor.from_numpy(np.random.default_rng(k).random(12) * (np.random.default_rng(k + 9).random(12) < 0.4), sv, name=n)
     for k, n in enumerate("bcd")}
got = kernel(**t).to_numpy()
want, _ = ss.evaluate("a[i] = b[i] * (c[i] + d[i])", **t)
assert np.allclose(got, want)
Explorer(kernel.trace)"""),
    ("md", """## Dense operands and matrices

A dense operand never runs out, so a loop over `b + c` with `b` dense covers the whole range; in a
matrix expression there is one lattice per index, outermost first."""),
    ("code", """# NBVAL_CHECK_OUTPUT
_, L = lattice_of("a[i] = b[i] + c[i]", b=ss.dense(1), c=sv)
print(points(L))
k2 = ss.lower("C[i, j] = A[i, j] * B[i, j]", A="dcsr", B="csr", C="dcsr")
for step in k2.trace.find("lattice"):
    print(step.note, points(step.artifact("lattice")))"""),
    ("md", """## Exercises

**1.** What are the points of `a[i] = b[i] * c[i] + d[i]`? Fill in `my_points`.
**2.** Confirm your answer with `needed_regions`.

(Hint: a point is a combination of present operands; a coordinate where `b` and `d` are stored
but `c` is not is still needed, since `b * 0 + d = d`.)"""),
    ("code", """my_points = [["b", "c", "d"], ["b", "c"], ["b", "d"], ["c", "d"], ["d"]]
_, L = lattice_of("a[i] = b[i] * c[i] + d[i]", b=sv, c=sv, d=sv, a=sv)
assert sorted(map(sorted, points(L))) == sorted(map(sorted, my_points)), points(L)
assert sorted(map(sorted, needed_regions(lambda b, c, d: b * c + d, "bcd"))) == sorted(map(sorted, my_points))
print("correct: the lattice of (b ∩ c) ∪ d has", len(my_points), "points")"""),
]
