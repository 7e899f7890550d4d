"""Block copies of appended runs (compiler.imperative.blockcopy): a shape operator's kernel that
copies a CSR row unchanged (vstack, hstack, a row slice, a collapse) counts the row's values the
output would drop (those equal to the fill) and, when there are none, copies the row in one SIMD
loop; a row holding one takes the entry-by-entry loop, which drops it. Each kernel against numpy,
the dense oracle and the IR interpreter, on empty operands, 0-row operands, NaN values and
explicitly stored fills."""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings, strategies as st

import compiler as ss
from compiler.format import parse_format
from compiler.imperative.blockcopy import block_copy, match
from compiler.imperative.ir import Comment, CompoundAssign, Declare, Grow, If, Load, Store, Tagged, Var, While
from compiler.imperative.traverse import walk
from compiler.reference import evaluate
from compiler.testing import check_lowered

nan = np.nan
VST = "D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)"
HST = "D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)"
# (rows of 8 entries or more are copied as blocks, shorter ones entry by entry: both kinds here)
A = np.array([[0, 1.5, 0, 4.0, 1, 2, 3, 4, 5, 6, 7, 8], [2.0, 0, 3.0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [0.0] * 12])
B = np.array([[7.0, 0, 0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0], [0.0] * 12, [9, 5.0, nan, 1, 2, 3, 4, 5, 6, 7, 8, 9]])


def run(program, out, fill=0.0, **arrays):
    """The looplets kernel of ``program`` for CSR operands (numpy arrays, or scipy matrices whose
    stored entries are kept as they are), checked against the oracle and the IR interpreter."""
    tensors = {n: ss.Tensor.from_scipy(a, name=n) if sp.issparse(a) else ss.Tensor.from_numpy(a, "csr", fill=fill)
               for n, a in arrays.items()}
    want, wfill = evaluate(program, **tensors)
    fmt = parse_format(out, ndim=want.ndim, fill=wfill.item())
    kernel = ss.lower(program, "looplets", **tensors, **{program.split("[")[0]: fmt})
    got = kernel(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want)
    return kernel, got


@pytest.mark.parametrize("out", ["csr", "coo"])
@pytest.mark.parametrize("program", [VST, HST])
def test_a_concat_of_csr_copies_each_row_as_a_block(program, out):
    k, got = run(program, out, A=A, B=B)
    np.testing.assert_array_equal(got.to_numpy(), (np.vstack if program == VST else np.hstack)([A, B]))
    c = k.c_source
    # (a CSR vstack copies each operand whole first, compiler.imperative.rowspans: its rows as before
    # when that copy met a dropped value, test_rowspans.py)
    spans = 2 if (program, out) == (VST, "csr") else 0
    assert c.count("copied as a block") == 2            # (one per operand's rows)
    assert c.count("copied as one block") == spans
    assert "#pragma omp simd reduction(+:n_dropped)" in c and "n_dropped += (int64_t)(A_val[" in c
    # (one pass: each run's copy loop counts its dropped values, no loop counts them before it)
    assert c.count("#pragma omp simd reduction") == 2 + spans and "#pragma omp simd\n" not in c
    rows = c.index("a run of 8 entries or more")
    loop = c[c.index("for (int64_t t", rows):][:400].split("}")[0]
    # (the rows' loop's copy names its locals t_3, n_dropped_3 after a span's)
    assert re.search(r"D_val\[\w+ \+ (t(?:_\d)?)\] = A_val\[qA \+ \1\];", loop)
    assert re.search(r"n_dropped(?:_\d)? \+= \(int64_t\)\(A_val\[qA \+ t(?:_\d)?\] == 0\.0\);", loop)
    assert any(s.stage == "block-copy" for s in k.trace.steps)
    # (the block copy keeps the tag of the looplet that appends, so the explorer links its C lines)
    tags = [n for n in walk(k.lowered.function.body) if isinstance(n, Tagged)
            and any(isinstance(m, Comment) and "copied as a block" in m.text for m in n.body.body)]
    assert len(tags) == 2 and all(t.origin is not None and t.origin.kind == "looplet" for t in tags)
    for t in tags:   # (the tag of the append the entry-by-entry loop runs)
        loops = [n for n in walk(t.body) if isinstance(n, While)]
        assert any(isinstance(m, Tagged) and m.tag == t.tag for w in loops for m in walk(w.body))


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("program", [VST, HST])
def test_empty_and_zero_row_operands_and_nan_values(program, fill):
    vertical = program == VST
    f = np.where(A == 0, fill, A)
    g = np.where(B == 0, fill, B)
    for a, b in ((f, g), (np.full((3, 12), fill), g), (f, np.full((3, 12), fill)),
                 (f[:0] if vertical else f[:, :0], g), (f, g[:0] if vertical else g[:, :0])):
        k, got = run(program, "csr", fill=fill, A=a, B=b)
        np.testing.assert_array_equal(got.to_numpy(), (np.vstack if vertical else np.hstack)([a, b]))
        assert "copied as a block" in k.c_source


@pytest.mark.parametrize("out", ["csr", "coo"])
def test_a_row_with_a_stored_fill_drops_it_as_before(out):
    # (scipy keeps explicit zeros; the output stores no fill: such a row is copied entry by entry)
    # (rows of 9 stored entries: one holds a stored 0.0, one a -0.0 and a NaN, one neither)
    vals = np.array([[1.0, 2, 0.0, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9], [1, -0.0, 2, 3, nan, 4, 5, 6, 7]])
    a = sp.csr_matrix((vals.ravel(), np.tile(np.arange(9), 3), np.arange(0, 28, 9)), shape=(3, 12))
    b = sp.csr_matrix(B)
    for program in (VST, HST, "D[k, i] = slice(A[j, i], j -> k, (0, 3, 2))"):
        arrays = {"A": a, "B": b} if "B[" in program else {"A": a}
        k, got = run(program, out, **arrays)
        vals = got.to_coords()[1]
        assert not np.any(vals == 0.0)                    # (the stored 0.0 and -0.0 dropped, NaN kept)
        assert np.isnan(vals).sum() == 1 + (np.isnan(B).sum() if "B[" in program else 0)
        assert "copied as a block" in k.c_source


@pytest.mark.parametrize("rows", [(0, 3, 2), (1, 3, 1), (1, 1, 1)])
def test_a_row_slice_and_a_collapse_copy_blocks(rows):
    a = np.vstack([A, B])
    k, got = run(f"S[k, i] = slice(A[j, i], j -> k, {rows})", "csr", A=a)
    np.testing.assert_array_equal(got.to_numpy(), a[slice(*rows)])
    assert "copied as a block" in k.c_source
    k, got = run("c[k] = collapse(A[i, j], (i, j) -> k)", "sparse", A=a)
    np.testing.assert_array_equal(got.to_numpy(), a.ravel())
    assert "copied as a block" in k.c_source


def test_the_block_copy_in_a_bounds_checked_build():
    a = ss.Tensor.from_numpy(np.vstack([A, B]), "csr")
    k = check_lowered(VST, out="csr", checked=True, strategy="looplets", A=a, B=a)
    assert "copied as a block" in k.c_source


@settings(max_examples=20, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, -2.5, nan, np.inf]), min_size=10, max_size=10),
                min_size=0, max_size=6), st.integers(0, 6), st.sampled_from(["csr", "coo"]))
@example([[0.0, -0.0, nan, 1.0, 0.0, 1, 1, 1, 1, 1], [1.0] * 10], 1, "csr")
@example([], 0, "coo")
def test_a_vstack_of_stored_values_of_every_kind(rows, cut, out):
    # each value stored explicitly (scipy's CSR of a dense block): fills among them are dropped
    m = np.array(rows, dtype=float).reshape(len(rows), 10)
    cut = min(cut, len(rows))
    top, bottom = (sp.csr_matrix((p.ravel(), np.tile(np.arange(10), len(p)), np.arange(0, 10 * len(p) + 1, 10)),
                                 shape=p.shape) for p in (m[:cut], m[cut:]))
    _, got = run(VST, out, A=top, B=bottom)
    np.testing.assert_array_equal(got.to_numpy(), np.where(m == 0, 0.0, m))
    assert got.nnz == np.count_nonzero(m != 0)


def _append(**change):
    q, n = Var("q"), Var("n")
    parts = dict(decl=Declare(Var("i"), "int64", Load("A1_idx", q)), grow=Grow("D1_idx", n + 1),
                 val=Store("D_val", n, Load("A_val", q)),
                 keep=If(Load("D_val", n).ne(0.0), [Store("D1_idx", n, Var("i")), CompoundAssign("+", n, 1)]),
                 step=CompoundAssign("+", q, 1))
    parts.update(change)
    return While(q < Var("q_end"), [s for s in parts.values() if s is not None])


DTYPES = {"D_val": "float64", "A_val": "float64", "x": "float64"}


def test_what_is_no_run_copy_is_left_as_it_is():
    assert match(_append(), DTYPES) is not None
    n, q = Var("n"), Var("q")
    for change in (dict(val=Store("D_val", n, Load("x", Load("A1_idx", q)))),   # a gather
                   dict(val=Store("D_val", n, Load("A_val", q), "+")),          # an update, not a copy
                   dict(step=CompoundAssign("+", q, 2)),                        # a stride
                   dict(decl=Declare(Var("i"), "int64", Load("A1_idx", q + 1))),  # another position
                   dict(grow=CompoundAssign("+", n, 1)),                        # the count moved twice
                   dict(keep=If(Load("D_val", n).ne(0.0), [Store("D1_idx", q, Var("i")),
                                                           CompoundAssign("+", n, 1)]))):   # not at the count
        loop = _append(**change)
        assert match(loop, DTYPES) is None
        assert block_copy([loop], DTYPES) == [loop]


@pytest.mark.parametrize("program", [VST, HST, "D[k, i] = slice(A[j, i], j -> k, (0, 3, 2))"])
def test_the_lattice_strategy_copies_rows_as_blocks_and_counts_them_once(program):
    # (its loops add one to the row's count per entry, D1_pos[l + 1] += 1: the block adds n_copy)
    stored = sp.csr_matrix((np.array([1.0, 0.0, 2.0, nan] + list(range(1, 9))), np.r_[0, 2, 3, np.arange(12)[:9]],
                            np.array([0, 3, 3, 12])), shape=(3, 12))
    for a in (np.vstack([A[:2], B[:1]]), stored, np.zeros((0, 12)) if program == VST else np.zeros((3, 0))):
        if program == HST and a.shape == (0, 12):
            continue
        ta = ss.Tensor.from_scipy(a, name="A") if sp.issparse(a) else ss.Tensor.from_numpy(a, "csr")
        tensors = {"A": ta, "B": ss.Tensor.from_numpy(np.nan_to_num(B), "csr")} if "B[" in program else {"A": ta}
        k = check_lowered(program, out="csr", strategy="lattice", **tensors)
        c = k.c_source
        assert "copied as a block" in c and re.search(r"D1_pos\[\w+ \+ 1\] \+= n_copy;", c)
        assert any(s.stage == "block-copy" for s in k.trace.steps)
        assert not np.any(k(**tensors).to_coords()[1] == 0.0)


def test_a_counter_that_moves_or_is_read_is_no_run_copy():
    n, q = Var("n"), Var("q")
    keep = If(Load("D_val", n).ne(0.0), [Store("D1_idx", n, Var("i")), Store("D1_pos", Var("l") + 1, 1, "+"),
                                          CompoundAssign("+", n, 1)])
    c = match(_append(keep=keep), DTYPES)
    assert c is not None and len(c.counters) == 1
    out = block_copy([_append(keep=keep)], DTYPES)
    assert "D1_pos[l + 1] += n_copy;" in str(out[4].then)
    for bad in (Store("D1_pos", Var("l") + 1, Load("A_val", q), "+"), Store("D1_pos", q, 1, "+")):
        moved = If(keep.cond, [keep.then.body[0], bad, keep.then.body[2]])
        assert match(_append(keep=moved), DTYPES) is None


def test_a_loop_the_caller_leaves_is_left_as_it_is():
    loop = _append()
    assert block_copy([loop], DTYPES) != [loop]
    assert block_copy([loop], DTYPES, leave={"q_end"}) == [loop]
    assert block_copy([loop], DTYPES, leave={"q_stop"}) != [loop]     # (another loop's bound)


# rows whose tails past the other operand's last entry are long (10 entries of A after B's only one)
# and short, empty rows, rows of B alone, and a stored 0.0 in a tail (dropped, as before)
MERGE_A = np.array([[0, 1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], [1.0] + [0] * 11, [0.0] * 12,
                    [0, 0, 0, 0, 5, 6, 7, 8, 9, 1, 2, 3]])
MERGE_B = np.array([[3.0] + [0] * 11, [0, 2.0, 3, 4, 5, 6, 7, 8, 9, 1, 2, 4], [1.0] * 12, [0.0] * 12])


@pytest.mark.parametrize("program", ["C[i, j] = A[i, j] + B[i, j]", "C[i, j] = max(A[i, j], B[i, j])"])
@pytest.mark.parametrize("out", ["csr", "coo"])
def test_the_tail_a_merge_leaves_is_appended_entry_by_entry(program, out):
    # (its run is rarely long: CSR + CSR of random rows, where 0.35% of the tails are 8 entries or
    # more, ran 1.1x slower with the count and the tests each row's tail paid for)
    k, got = run(program, out, A=MERGE_A, B=MERGE_B)
    np.testing.assert_array_equal(got.to_numpy(), np.maximum(MERGE_A, MERGE_B) if "max" in program
                                  else MERGE_A + MERGE_B)
    assert "copied as a block" not in k.c_source and "n_copy" not in k.c_source
    assert not any(s.stage == "block-copy" for s in k.trace.steps)
    stored = sp.csr_matrix(MERGE_A)
    stored.data[5] = 0.0   # (a stored zero in row 0's tail)
    run(program, out, A=stored, B=MERGE_B)


def test_a_fiber_walked_alone_is_still_copied_as_a_block():
    # (a copy, a scaled copy has no run copy: its values change)
    k, got = run("C[i, j] = A[i, j]", "csr", A=MERGE_A)
    np.testing.assert_array_equal(got.to_numpy(), MERGE_A)
    assert "copied as a block" in k.c_source


@settings(max_examples=3, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.5, -2.0, nan, np.inf]), min_size=12, max_size=12))
@example([1.5] * 12)          # (one run of 12 kept entries: copied as a block)
@example([0.0] * 12)          # (all fill)
def test_a_block_copy_keeps_the_expression_tags_of_the_append_it_copies(a):
    """``concat((a[j], b[k]), ...) * 2`` by looplets copies a run of 8 entries or more as a block: the
    copy's store and its count of dropped values compute the product as the entry-by-entry append
    does, and carry the same tags of the expression tree's nodes (on main they carried none: the
    explorer linked no node to them). The kernel agrees with numpy and the dense oracle."""
    from compiler import array as xp

    av = ss.Tensor.from_numpy(np.array(a), "sv")
    bv = ss.Tensor.from_numpy(np.array([1.0, 0.0, 2.0]), "sv")
    k = ss.lower(xp.concat([ss.asarray(av), ss.asarray(bv)]) * 2.0, strategy="looplets")
    got = np.asarray(k(A=av, B=bv).to_numpy())
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got, np.concatenate([np.array(a), [1.0, 0.0, 2.0]]) * 2.0)
    c = next(x for s in k.trace.steps for x in s.artifacts if x.kind == "c" and x.data.get("provenance"))
    lines = c.text.splitlines()
    tags: dict[int, set] = {}
    for tag, at in c.data["provenance"].items():
        for n in at:
            if tag.startswith("expr:"):
                tags.setdefault(n, set()).add(tag)
    for tensor in "AB":
        appends = [n for n, x in enumerate(lines, 1) if re.search(rf"out_val\[out0_nnz\] = {tensor}_val\[", x)]
        stores = [n for n, x in enumerate(lines, 1) if re.search(rf"out_val\[out0_nnz \+ t\w*\] = {tensor}_val\[", x)]
        # (the count of dropped values, in the lines after the store, tests the value the copy stored)
        copies = stores + [m for n in stores for m in range(n + 1, n + 4)
                           if re.search(r"n_dropped\w* \+= .*out_val\[out0_nnz \+ t", lines[m - 1])]
        assert appends and len(copies) == 2, (tensor, appends, copies)
        assert all(tags.get(n) == tags[appends[0]] and tags[n] for n in copies), (tensor, [tags.get(n) for n in copies])


def test_a_run_walked_down_from_a_top_is_copied_reversed():
    # (a column sliced [::-1] reads its entries at top - t: a block copy reads them at top - (t + k); a top the loop
    # moves is no such run)
    t, n, top = Var("t"), Var("n"), Var("top")

    def loop(at):
        return While(t < Var("t_end"), [Declare(Var("i"), "int64", 9 - Load("A1_idx", at)), Grow("D1_idx", n + 1),
                                        Store("D_val", n, Load("A_val", at)),
                                        If(Load("D_val", n).ne(0.0), [Store("D1_idx", n, Var("i")),
                                                                      CompoundAssign("+", n, 1)]),
                                        CompoundAssign("+", t, 1)])
    out = block_copy([loop(top - t)], {"D_val": "float64", "A_val": "float64"})
    text = "\n".join(map(str, out))
    assert "D_val[n + t_2] = A_val[top - (t + t_2)];" in text and "9 - A1_idx[top - (t + t_2)]" in text, text
    moved = loop(top - t)
    moved = While(moved.cond, [*moved.body.body[:-1], CompoundAssign("-", top, 1), moved.body.body[-1]])
    assert match(moved, {"D_val": "float64"}) is None
    assert match(loop(t - top), {"D_val": "float64"}) is None


@pytest.mark.parametrize("program", ["C[i, j] = A[i, j] * A[i, j] - A[i, j]", "C[i, j] = exp(A[i, j] * 2.0) - 1.0"])
def test_the_filter_of_a_computed_value_reads_what_the_copy_stored(program):
    # (it computed the value again: the C printed the expression twice in each copy loop)
    a = np.array([[1.0, 0.0, np.inf, 2.0, 0.0, 3.0, 1.0, 1.0, 1.0, 1.0, 0.5, 4.0]] * 3)
    a[1, ::2] = 0.0
    A = ss.Tensor.from_numpy(a, "csr", name="A")
    k = ss.lower(program, strategy="looplets", A=A, C="csr")
    counted = [line for line in k.c_source.splitlines() if "n_dropped" in line and "+=" in line]
    read_back = r"\+= \(int64_t\)\(C_val\[C1_nnz \+ t(_\d+)?\] == "
    assert counted and all(re.search(read_back, line) for line in counted), counted
    with np.errstate(all="ignore"):
        want, _ = evaluate(program, A=A)
    np.testing.assert_array_equal(k(A=A).to_numpy(), want)
