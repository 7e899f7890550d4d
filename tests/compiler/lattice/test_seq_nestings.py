"""Two shape operators nested, compiled by the lattice strategy (issue 30 item 3/4): a collapse
(reshape) of a concatenation, whose product the sequence layer distributes over the
concatenation's sides (a vstack's ``(a ⊔ b) × (i_a ∪ i_b)`` is ``(a × i_a) ⊔ (b × i_b)``; an
hstack's ``(i_a ∪ i_b) × (a ⊔ b)`` a union of one product per part), and a split of a
concatenation, into dense, compressed-vector, CSR and COO outputs; each against numpy, the dense
oracle and both interpreters, through index notation and the array front end."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler import evaluate
from compiler.tensor import Tensor

sys.path.insert(0, str(Path(__file__).parent))
from test_seqemit import run_all  # noqa: E402

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)
MATRIX_FORMATS = ("csr", "coo", "dense", "dcsr")


def check_ravel(program, tensors, want, fill, out, seed):
    """``program`` (a ravel into ``c``) against numpy's ``want`` and the oracle, into ``out`` (a vector
    format name, or None for the lattice's choice), checked build on every fourth seed; a sparse output
    appended in order, storing no entry of its fill."""
    oracle, oracle_fill = evaluate(program, **tensors)
    np.testing.assert_array_equal(oracle, want)
    output = None if out is None else ss.parse_format(out, ndim=1, fill=fill)
    np.testing.assert_array_equal(run_all(program, tensors, checked=seed % 4 == 0, out=output), want)
    k = ss.lower(program, strategy="lattice", **tensors, **({} if output is None else {"c": output}))
    result = k(**tensors)
    np.testing.assert_array_equal(result.fill, oracle_fill)
    if output is not None:   # (appended in order, the fill's entries not stored)
        coords, stored = result.to_coords()
        assert np.all(np.diff(coords[0]) > 0) and not np.any(stored == fill), (coords, stored)


def filled(rng, shape, density, fill):
    """A random array whose entries not drawn are ``fill`` (stored NaN/±inf among those drawn)."""
    vals = rng.choice([1.0, -2.5, 3.0, np.nan, np.inf, -np.inf, 0.0], size=shape, p=[.3, .2, .2, .1, .05, .05, .1])
    return np.where(rng.random(shape) < density, vals, fill)


def stack_ravel_program(steps, axis):
    """``c[k]`` = the row-major ravel of the stack along ``axis`` (0: vstack, 1: hstack) of
    ``len(steps)`` matrices, the m-th read with the step ``steps[m]`` along that axis (1: as it is;
    -1: reversed; 2: every other one); ``{start<m>}`` and ``{stop<m>}`` are left to fill in."""
    parts, names = [], []
    for m, r in enumerate(steps):
        t, j, p = f"M{m}", f"j{m}", f"p{m}"
        access = f"{t}[{j}, i]" if axis == 0 else f"{t}[i, {j}]"
        if r == 1:
            parts.append(access)
            names.append(j)
        else:
            parts.append(f"slice({access}, {j} -> {p}, ({{start{m}}}, {{stop{m}}}, {r}))")
            names.append(p)
    order = "(l, i)" if axis == 0 else "(i, l)"
    return f"c[k] = collapse(concat(({', '.join(parts)}), ({', '.join(names)}) -> l), {order} -> k)"


def sliced(a, r):
    return a if r == 1 else a[::r]


@st.composite
def vstack_ravels(draw):
    """(rows of each part, columns, row steps, formats, fill, density, output)."""
    n = draw(st.integers(2, 3))
    rows = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    cols = draw(st.integers(1, 3))
    steps = draw(st.lists(st.sampled_from([1, 1, -1, 2, -2]), min_size=n, max_size=n))
    fmts = draw(st.lists(st.sampled_from(MATRIX_FORMATS), min_size=n, max_size=n))
    return (rows, cols, steps, fmts, draw(st.sampled_from(FILLS)), draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([None, "sparse"])))


def bounds(n, r):
    """numpy's ``[::r]`` of an extent n as the notation's normalized (start, stop)."""
    return (0, n) if r > 0 else (n - 1, -1)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(vstack_ravels(), st.integers(0, 2 ** 32 - 1))
@example(([1, 1], 2, [1, 1], ["csr", "csr"], 0.0, 1.0, "sparse"), 0)          # the refused vstack ravel
@example(([3, 0], 2, [1, 1], ["coo", "dense"], np.nan, 0.5, None), 1)         # an empty side, NaN fill
@example(([2, 3, 1], 3, [-1, 2, 1], ["dcsr", "coo", "csr"], -np.inf, 0.5, "sparse"), 2)   # slices inside
@example(([0, 0], 1, [-2, 1], ["csr", "coo"], 1.0, 0.5, "sparse"), 3)         # nothing to ravel
def test_a_collapse_of_a_concatenation(case, seed):
    """``np.vstack(parts).ravel()`` (parts sliced along their rows, negative steps too) is one
    lattice kernel: each side's rows then columns, its offset the sizes of the sides before."""
    rows, cols, steps, fmts, fill, density, out = case
    rng = np.random.default_rng(seed)
    arrays = [filled(rng, (n, cols), density, fill) for n in rows]
    marks = {}
    for m, (n, r) in enumerate(zip(rows, steps)):
        marks[f"start{m}"], marks[f"stop{m}"] = bounds(n, r)
    program = stack_ravel_program(steps, 0).format(**marks)
    tensors = {f"M{m}": Tensor.from_numpy(a, f, fill=fill) for m, (a, f) in enumerate(zip(arrays, fmts))}
    want = np.vstack([sliced(a, r) for a, r in zip(arrays, steps)]).ravel()
    check_ravel(program, tensors, want, fill, out, seed)


@pytest.mark.parametrize("out", [None, "csr", "coo"])
@pytest.mark.parametrize("fa, fb", [("csf", "coo"), ("coo", "dense"), ("dense", "csf")])
def test_a_collapse_of_a_concatenation_into_a_matrix(out, fa, fb):
    """Two 3-d tensors concatenated along their middle mode, then that mode collapsed with the
    last: ``np.concatenate([a, b], axis=1).reshape(n, -1)``, into a dense, CSR and COO output."""
    rng = np.random.default_rng(5)
    a, b = filled(rng, (3, 2, 4), 0.4, 0.0), filled(rng, (3, 1, 4), 0.6, 0.0)
    program = "C[i, m] = collapse(concat((A[i, j, q], B[i, p, q]), (j, p) -> l), (l, q) -> m)"
    tensors = {"A": Tensor.from_numpy(a, fa), "B": Tensor.from_numpy(b, fb)}
    want = np.concatenate([a, b], axis=1).reshape(3, -1)
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    np.testing.assert_array_equal(run_all(program, tensors, checked=True, out=out), want)


def test_a_fused_linear_layer_on_a_raveled_vstack():
    """``W @ vec([A; B])``: the reduction walks the collapse of the concatenation, nothing built."""
    rng = np.random.default_rng(6)
    a, b, w = (filled(rng, s, 0.5, 0.0) for s in ((3, 4), (2, 4), (2, 20)))
    w = np.nan_to_num(w, nan=1.0, posinf=2.0, neginf=-2.0)
    a, b = (np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0) for x in (a, b))
    program = "y[o] = sum[k](W[o, k] * collapse(concat((A[j, i], B[p, i]), (j, p) -> l), (l, i) -> k))"
    tensors = {"A": Tensor.from_numpy(a, "csr"), "B": Tensor.from_numpy(b, "coo"), "W": Tensor.from_numpy(w, "dense")}
    want = w @ np.vstack([a, b]).ravel()
    np.testing.assert_allclose(evaluate(program, **tensors)[0], want)
    np.testing.assert_allclose(run_all(program, tensors), want)


@pytest.mark.parametrize("fill", [0.0, np.nan, -np.inf])
def test_the_array_front_end_ravels_a_vstack_in_one_kernel(fill):
    """``reshape(concat([a, b]), (-1,))`` is one lattice kernel, the concatenation of the operands'
    ravels: nothing materialized (before, the concat and the reshape were each computed apart)."""
    rng = np.random.default_rng(7)
    a, b = filled(rng, (4, 3), 0.5, fill), filled(rng, (2, 3), 0.5, fill)
    A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "coo", fill=fill)
    for expr, want in [(xp.reshape(xp.concat([xp.asarray(A), xp.asarray(B)], axis=0), (-1,)),
                        np.vstack([a, b]).ravel()),
                       (xp.concat([xp.asarray(A)[::-2], xp.asarray(B)], axis=0).reshape(-1),
                        np.vstack([a[::-2], b]).ravel())]:
        k = ss.lower(expr, strategy="lattice")
        assert k.trace.find("materialize") == [] and "concat((collapse(" in str(k.program), k.trace
        np.testing.assert_array_equal(np.asarray(expr), want)
        got = expr.compute(format="sparse")
        np.testing.assert_array_equal(got.to_numpy(), want)


@st.composite
def hstack_ravels(draw):
    """(rows, columns of each part, column steps, formats, fill, density, output)."""
    n = draw(st.integers(2, 3))
    rows = draw(st.integers(0, 4))
    cols = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    steps = draw(st.lists(st.sampled_from([1, 1, -1, 2, -3]), min_size=n, max_size=n))
    fmts = draw(st.lists(st.sampled_from(MATRIX_FORMATS), min_size=n, max_size=n))
    return (rows, cols, steps, fmts, draw(st.sampled_from(FILLS)), draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([None, "sparse"])))


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(hstack_ravels(), st.integers(0, 2 ** 32 - 1))
@example((2, [3, 2], [1, 1], ["csr", "csr"], 0.0, 1.0, "sparse"), 0)        # refused before
@example((3, [2, 0, 3], [1, -1, 2], ["coo", "dense", "dcsr"], np.nan, 0.5, None), 1)   # an empty part
@example((4, [3, 4], [-1, -3], ["dense", "coo"], -np.inf, 0.5, "sparse"), 2)           # reversed parts
@example((0, [2, 2], [1, 2], ["csr", "coo"], 1.0, 0.5, "sparse"), 3)        # no rows
def test_a_collapse_of_an_hstack(case, seed):
    """``np.hstack(parts).ravel()`` (parts sliced along their columns, negative steps too) is one
    lattice kernel: ``(i_A ∪ i_B) × (j_A ⊔ k_B)`` is the union of one product per part,
    ``(i_A × (j_A + |k_B|)) ∪ (i_B × (|j_A| + k_B))`` (``concat-per-row``): each row's coordinates
    are A's row then B's. It was refused (a concatenation in the right operand of a product)."""
    rows, cols, steps, fmts, fill, density, out = case
    rng = np.random.default_rng(seed)
    arrays = [filled(rng, (rows, n), density, fill) for n in cols]
    marks = {}
    for m, (n, r) in enumerate(zip(cols, steps)):
        marks[f"start{m}"], marks[f"stop{m}"] = bounds(n, r)
    program = stack_ravel_program(steps, 1).format(**marks)
    tensors = {f"M{m}": Tensor.from_numpy(a, f, fill=fill) for m, (a, f) in enumerate(zip(arrays, fmts))}
    want = np.hstack([a[:, ::r] for a, r in zip(arrays, steps)]).reshape(-1)
    check_ravel(program, tensors, want, fill, out, seed)


def test_the_hstack_ravels_lattice_records_the_rewrite_and_checks_by_brute_force():
    # (as the CFIR's loop does: the loop's sequence simplified with what is live, then its lattice)
    from compiler.lattice.seqlattice import build_seq_lattice, simplify
    from compiler.lattice.seqcheck import check_seq_lattice
    from compiler.lattice.sequences import Concat, Level, Union
    from compiler.lattice.sequences import Product as SeqProduct
    iA, jA = Level("A", 0, "compressed", 3, "i"), Level("A", 1, "compressed", 4, "j")
    iB, kB = Level("B", 0, "dense", 3, "i"), Level("B", 1, "compressed", 2, "k")
    log = []
    seq = simplify(SeqProduct(Union(iA, iB), Concat(jA, kB)), frozenset(), log)
    assert "concat-per-row" in [r.rule for r in log]
    assert str(seq) == "(i_A × (j_A + 2)) ∪ (i_B × (4 + k_B))"
    assert check_seq_lattice(build_seq_lattice(seq, frozenset())).exact


@pytest.mark.parametrize("fill", [0.0, np.nan, np.inf])
def test_the_array_front_end_ravels_an_hstack_in_one_kernel(fill):
    """``np.hstack([a, b]).ravel()``, ``concat(axis=1)`` then ``reshape(-1)``: one lattice kernel,
    nothing materialized (before, the concat and the reshape were each computed apart), given no
    strategy too; three parts, one tensor twice, a reversed part."""
    rng = np.random.default_rng(8)
    a, b = filled(rng, (3, 4), 0.5, fill), filled(rng, (3, 2), 0.5, fill)
    A, B = xp.asarray(Tensor.from_numpy(a, "csr", fill=fill)), xp.asarray(Tensor.from_numpy(b, "coo", fill=fill))
    for expr, want in [(xp.concat([A, B], axis=1).reshape(-1), np.hstack([a, b]).ravel()),
                       (xp.concat([A, B, A[:, ::-1]], axis=1).reshape(-1), np.hstack([a, b, a[:, ::-1]]).ravel()),
                       (xp.concat([A, A], axis=1).reshape(-1), np.hstack([a, a]).ravel())]:
        for strategy in ("lattice", None):
            k = ss.lower(expr, strategy=strategy)
            assert k.strategy == "lattice" and k.trace.find("materialize") == [], k.trace
            assert "collapse(concat((" in str(k.program)
            np.testing.assert_array_equal(k().to_numpy(), want)
            oracle, _ = evaluate(k.program, **k.arguments)
            np.testing.assert_array_equal(oracle, want)


@pytest.mark.parametrize("out", [None, "csr", "coo"])
@pytest.mark.parametrize("fa, fb", [("csf", "coo"), ("coo", "dense")])
def test_a_collapse_of_an_hstack_into_a_matrix_and_inside_a_reduction(out, fa, fb):
    """3-d tensors concatenated along their last mode, that mode collapsed with the middle one
    (``np.concatenate([a, b], axis=2).reshape(n, -1)``) into dense, CSR and COO; and ``W @
    hstack([A, B]).ravel()``, the reduction walking the union of the parts' products."""
    rng = np.random.default_rng(9)
    a, b = filled(rng, (3, 2, 4), 0.4, 0.0), filled(rng, (3, 2, 3), 0.6, 0.0)
    program = "C[i, m] = collapse(concat((A[i, j, q], B[i, j, p]), (q, p) -> l), (j, l) -> m)"
    tensors = {"A": Tensor.from_numpy(a, fa), "B": Tensor.from_numpy(b, fb)}
    want = np.concatenate([a, b], axis=2).reshape(3, -1)
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    np.testing.assert_array_equal(run_all(program, tensors, checked=True, out=out), want)
    m, n = (np.nan_to_num(filled(rng, (4, k), 0.5, 0.0), nan=1.0, posinf=2.0, neginf=-2.0) for k in (3, 2))
    w = rng.random((2, 20))
    program = "y[o] = sum[k](W[o, k] * collapse(concat((A[i, j], B[i, p]), (j, p) -> l), (i, l) -> k))"
    tensors = {"A": Tensor.from_numpy(m, fa if fa != "csf" else "csr"), "B": Tensor.from_numpy(n, fb), "W": w}
    want = w @ np.hstack([m, n]).ravel()
    np.testing.assert_allclose(evaluate(program, **tensors)[0], want)
    np.testing.assert_allclose(run_all(program, tensors), want)


@pytest.mark.parametrize("fa", ["csr", "coo"])
def test_a_ravel_of_an_hstack_with_a_broadcast_part_nests_the_rows_loops(fa):
    """A part that reads no level of its own outer index (a broadcast vector) has no product of its own:
    the loop over ``(i_A ∪ i_x) × (j_A ⊔ U_k)`` runs the concatenation's loops inside each row
    (seqproductnest; before, refused naming looplets)."""
    A = Tensor.from_numpy(np.array([[1.0, 0, 2.0], [0, 0, 0]]), fa)
    x = Tensor.from_numpy(np.array([0, 3.0]), "sparse")
    program = "c[m] = collapse(concat((A[i, j], broadcast(k:2, x[i])), (j, k) -> l), (i, l) -> m)"
    want = np.hstack([A.to_numpy(), np.repeat(x.to_numpy()[:, None], 2, axis=1)]).ravel()
    np.testing.assert_array_equal(run_all(program, {"A": A, "x": x}), want)
    cfir = ss.lower(program, strategy="lattice", A=A, x=x).trace.find("cfir")[0].after_text
    assert "while m_col <- j_A ⊔ U_k" in cfir and "m = m_row·5 + m_col" in cfir, cfir


@st.composite
def vector_splits(draw):
    """(parts' lengths, J, formats, fill, density, output): the total a multiple of J; the parts'
    lengths too, or any (a group may straddle two parts, or span a whole part)."""
    J = draw(st.integers(1, 3))
    k = draw(st.integers(2, 3))
    if draw(st.booleans()):
        lengths = [J * draw(st.integers(0, 3)) for _ in range(k)]
    else:
        lengths = [draw(st.integers(0, 7)) for _ in range(k)]
        lengths[-1] += -sum(lengths) % J
    fmts = draw(st.lists(st.sampled_from(["dense", "sparse"]), min_size=k, max_size=k))
    return (lengths, J, fmts, draw(st.sampled_from(FILLS)), draw(st.sampled_from([0.0, 0.5, 1.0])),
            draw(st.sampled_from([None, "csr", "coo"])))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(vector_splits(), st.integers(0, 2 ** 32 - 1))
@example(([12, 8], 4, ["dense", "dense"], 0.0, 1.0, None), 0)      # crashed: KeyError ('π0', Offset(...), 4)
@example(([12, 8], 4, ["sparse", "sparse"], 0.0, 1.0, "csr"), 0)   # y's rows read as empty by the interpreter
@example(([0, 3, 3], 3, ["sparse", "dense", "sparse"], np.nan, 0.5, "coo"), 1)
# (groups straddling the parts: refused before, 'the groups of 3 straddle position 5')
@example(([5, 1, 3], 3, ["sparse", "dense", "sparse"], np.inf, 0.5, "csr"), 2)
def test_a_split_of_a_concatenation(case, seed):
    """``np.concatenate(parts).reshape(-1, J)``: the loop over π0(a ⊔ b, J) goes on over
    π0(|a| + b, J) once a runs out, and the π1 loop inside follows it (before, the π1 of the
    first side's sequence was not live there: the second part's rows were lost, or the C
    emission raised a KeyError on the new π0's group). A group straddling two parts is visited
    by each part's loop, over its own entries."""
    lengths, J, fmts, fill, density, out = case
    rng = np.random.default_rng(seed)
    names = [f"v{m}" for m in range(len(lengths))]
    arrays = [filled(rng, (n,), density, fill) for n in lengths]
    program = (f"C[p, q] = split(concat(({', '.join(f'{n}[j{m}]' for m, n in enumerate(names))}), "
               f"({', '.join(f'j{m}' for m in range(len(names)))}) -> l), l -> (p, q:{J}))")
    tensors = {n: Tensor.from_numpy(a, f, fill=fill) for n, a, f in zip(names, arrays, fmts)}
    want = np.concatenate(arrays).reshape(-1, J)
    np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
    output = None if out is None else ss.parse_format(out, ndim=2, fill=fill)
    np.testing.assert_array_equal(run_all(program, tensors, checked=seed % 4 == 0, out=output), want)


def test_the_array_front_end_splits_a_concatenation_in_one_kernel():
    """``concat([x, y]).reshape(5, 4)`` of sparse vectors: one lattice kernel, nothing materialized."""
    x, y = np.arange(12.0) * (np.arange(12) % 3 != 1), np.arange(1, 9.0)
    X, Y = (xp.asarray(Tensor.from_numpy(v, "sparse")) for v in (x, y))
    expr = xp.concat([X, Y]).reshape(5, 4)
    k = expr.lower(strategy="lattice")
    assert k.trace.find("materialize") == [] and "split(concat((" in str(k.program), k.trace
    for fmt in (None, "csr", "coo"):
        np.testing.assert_array_equal(expr.compute(format=fmt, strategy="lattice").to_numpy(),
                                      np.concatenate([x, y]).reshape(5, 4))
