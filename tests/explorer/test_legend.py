"""The legend under lattice and looplet-nest drawings explains the notation they use."""

import compiler as ss
from explorer.examples import spmv_trace
from explorer.legend import legend_terms
from explorer.renderers import render_artifact


def _arts(kernel, kind):
    return [a for s in kernel.trace.steps for a in s.artifacts if a.kind == kind]


def test_lattice_legend_names_points_universe_and_the_algebra():
    three = _arts(ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv"), "lattice")[0]
    terms = [t for t, _ in legend_terms(three)]
    assert terms == ["[iterated | located]", "∩", "∪", "edge X"]
    html = render_artifact(three)
    assert html.index("<svg") < html.index('class="ss-legend"') and "left of |" in html
    spmv_i = _arts(ss.lower("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense"), "lattice")[0]
    assert "U" in [t for t, _ in legend_terms(spmv_i)]   # the dense rows: [U | A]
    assert "∪" not in [t for t, _ in legend_terms(spmv_i)]


def test_nest_legend_names_the_looplets_drawn():
    nests = _arts(ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense"), "looplet-nest")
    row = next(a for a in nests if a.name.startswith("A.lvl1"))
    assert [t for t, _ in legend_terms(row)] == ["Fill", "Spike", "Sequence / Phase", "Stepper", "Thunk"]
    dense = next(a for a in nests if a.name == "x[j]")
    assert [t for t, _ in legend_terms(dense)] == ["Lookup"]
    assert "random access" in render_artifact(dense)


def test_other_drawings_have_no_legend():
    tree = next(a for s in spmv_trace().steps for a in s.artifacts if a.kind == "fiber-tree")
    assert legend_terms(tree) == [] and "ss-legend" not in render_artifact(tree)


def test_sequence_layer_legends_name_the_combinators_drawn():
    import numpy as np

    from compiler.lattice.seqderive import seq_lower

    M = ss.Tensor.from_numpy(np.arange(12.0).reshape(3, 4) % 3, "csr")
    N = ss.Tensor.from_numpy(np.arange(8.0).reshape(2, 4) % 2, "coo")
    low = seq_lower("y[l] = sum[i](concat((M[j, i], N[k, i]), (j, k) -> l) * broadcast(l, v[i]))",
                    M=M, N=N, v=np.arange(4.0))
    arts = {a.kind: a for s in low.trace for a in s.artifacts}   # (the last of each kind)
    concat = next(a for s in low.trace for a in s.artifacts if a.kind == "seq-lattice")
    assert [t for t, _ in legend_terms(concat)] == ["j_A", "⊔", "|a| + X", "∅", "edge X / rule", "no loop",
                                                    "dotted edge"]
    assert "disjoint union" in render_artifact(concat)
    derivation = next(a for s in low.trace for a in s.artifacts if a.kind == "seq-derivation")
    assert {"Seq(·, i)", "line N", "U_i", "⊔"} <= {t for t, _ in legend_terms(derivation)}
    assert {"while i <- S", "with x = y"} <= {t for t, _ in legend_terms(arts["seq-cfir"])}
    split = seq_lower("g[i, j] = split(w[k], k -> (i, j:4)) + M[i, j]", M=M, w=np.arange(12.0))
    lattices = [a for s in split.trace for a in s.artifacts if a.kind == "seq-lattice"]
    assert any("π0, π1" in [t for t, _ in legend_terms(a)] for a in lattices)


def test_a_universe_tied_to_a_concat_part_is_named_by_the_part_and_explained():
    import numpy as np

    from compiler import array as xp

    x = xp.asarray(ss.Tensor.from_numpy(np.array([0, 1.5, 0, -2, 0, 3.0, 0]), "sparse"))
    k = ss.lower(xp.stack([x * 2, x + 1], axis=1), strategy="lattice")
    cfir = next(a for s in k.trace.steps for a in s.artifacts if a.kind == "seq-cfir")
    # (the second part, along l, holds no level: its universe of i is named by the part's index, not U_i#U_l)
    assert cfir.text.startswith("while i <- i_A ∪ U_i#l\n") and "#U_" not in cfir.text, cfir.text
    meaning = dict(legend_terms(cfir))["U_i#k"]
    assert "concat's part" in meaning and "collapsed sum" in meaning
