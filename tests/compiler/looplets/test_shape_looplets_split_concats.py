"""A concatenation read at an index another operator computes, under the looplets strategy (issue
30 item 4): a split of a concat (``np.concatenate([x, y]).reshape(-1, J)``) or a slice of one
reads each part permissively where that index falls in it and takes the first part present,
``coalesce(x[~(q + p·J)], y[~(q + p·J - |x|)])``; groups of ``J`` may straddle two parts. It was
refused ('here l is computed by another shape operator'), and the array front end materialized the
concat. Against numpy, the dense oracle and the IR interpreter."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError
from compiler.reference import evaluate

nan, inf = np.nan, np.inf
FILLS = (0.0, 1.0, nan, inf, -inf)


def split_concat_program(n_parts, rows, J, key):
    """``C[p, q] = split(concat((x0[j0], x1[j1], ...)), l -> (p:rows, q:J))``, its rows sliced by
    ``key`` (``(start, stop, step)``, normalized) when given."""
    names = [f"x{m}" for m in range(n_parts)]
    concat = (f"concat(({', '.join(f'{n}[j{m}]' for m, n in enumerate(names))}), "
              f"({', '.join(f'j{m}' for m in range(n_parts))}) -> l)")
    split = f"split({concat}, l -> ({'r' if key else 'p'}:{rows}, q:{J}))"
    return f"C[p, q] = {split if key is None else f'slice({split}, r -> p, {key})'}", names


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 3), J=st.integers(1, 4), fill=st.sampled_from(FILLS),
       fmts=st.lists(st.sampled_from(["sparse", "dense"]), min_size=2, max_size=3),
       step=st.sampled_from([None, 1, -1, 2, -2]), out=st.sampled_from(["dense", "csr", "coo"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=3, J=2, fill=0.0, fmts=["sparse", "sparse"], step=None, out="csr", seed=0)  # refused
@example(rows=2, J=3, fill=nan, fmts=["sparse", "dense", "sparse"], step=-1, out="coo", seed=1)
@example(rows=3, J=4, fill=-inf, fmts=["dense", "sparse"], step=2, out="dense", seed=2)
@example(rows=0, J=2, fill=1.0, fmts=["sparse", "sparse"], step=-2, out="csr", seed=3)
def test_a_split_of_a_concatenation(rows, J, fill, fmts, step, out, seed):
    rng = np.random.default_rng(seed)
    n = rows * J
    # (the parts' lengths: any cut of rows·J, 0-size parts too, groups straddling parts)
    cuts = np.sort(rng.integers(0, n + 1, len(fmts) - 1))
    lengths = np.diff(np.concatenate([[0], cuts, [n]]))
    parts = [np.where(rng.random(m) < 0.5, rng.choice([1.0, -2.0, nan, inf], m), fill) for m in lengths]
    key, want = None, np.concatenate(parts).reshape(rows, J)
    if step is not None:
        lo, hi = rng.integers(-rows - 1, rows + 2, 2)
        start, stop, _ = slice(int(lo), int(hi), step).indices(rows)
        stop = max(start, stop) if step > 0 else (min(start, stop) if start >= 0 else -1)
        key, want = (start, stop, step), want[int(lo):int(hi):step]
    prog, names = split_concat_program(len(fmts), rows, J, key)
    T = {nm: ss.Tensor.from_numpy(v, f, fill=fill) for nm, v, f in zip(names, parts, fmts)}
    oracle, oracle_fill = evaluate(prog, **T)
    np.testing.assert_array_equal(oracle, want)
    kernel = ss.lower(prog, "looplets", **T, C=ss.parse_format(out, ndim=2, fill=oracle_fill.item()))
    np.testing.assert_array_equal(kernel(**T).to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**T).to_numpy(), want)


@pytest.mark.parametrize("fmts, key, fill, carried", [
    (["sparse", "sparse", "sparse"], None, 0.0, "x0 on q, x1 on q, x2 on q"),
    (["sparse", "dense"], (1, 5, 2), nan, "x0 on q"),   # (a dense part has no cursor to carry)
])
def test_a_split_of_a_sparse_concatenation_walks_each_part_once(fmts, key, fill, carried):
    """Each sparse part's cursor carries from row to row (the trace's ``carry`` step): row ``p``
    reads the part's window ``[p·J - offset, p·J - offset + J)``, at or after the last row's, so
    its walk goes on from where the last one stopped instead of searching the part from its start
    (the permissive read ``~(q + p·J)`` was not carried: one binary search per part per row)."""
    rng = np.random.default_rng(5)
    lengths = [5, 0, 7][:len(fmts)] if len(fmts) == 3 else [5, 7]
    parts = [np.where(rng.random(m) < 0.6, rng.choice([1.0, -2.0, inf], m), fill) for m in lengths]
    want = np.concatenate(parts).reshape(6, 2)
    if key is not None:
        want = want[key[0]:key[1]:key[2]]
    prog, names = split_concat_program(len(fmts), 6, 2, key)
    T = {nm: ss.Tensor.from_numpy(v, f, fill=fill) for nm, v, f in zip(names, parts, fmts)}
    kernel = ss.lower(prog, "looplets", **T, C=ss.parse_format("csr", ndim=2, fill=fill))
    (step,) = [s for s in kernel.trace.steps if s.stage == "carry"]
    assert step.note.endswith(carried), step.note
    np.testing.assert_array_equal(kernel(**T).to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**T).to_numpy(), want)
    np.testing.assert_array_equal(evaluate(prog, **T)[0], want)


@pytest.mark.parametrize("program, shapes, want", [
    # (a vstack's rows split in two: C[p, q, i] reads A's row q + 2p, or B's after |A|'s rows)
    ("C[p, q, i] = split(concat((A[j, i], B[k, i]), (j, k) -> l), l -> (p:3, q:2))", ((4, 3), (2, 3)),
     lambda a, b: np.vstack([a, b]).reshape(3, 2, 3)),
    ("C[i, p, q] = split(concat((A[i, j], B[i, k] * 2.0), (j, k) -> l), l -> (p:2, q:3))", ((3, 4), (3, 2)),
     lambda a, b: np.hstack([a, b * 2]).reshape(3, 2, 3)),
    ("s[p] = sum[q, i](split(concat((A[j, i], B[k, i]), (j, k) -> l), l -> (p:2, q:3)))", ((4, 3), (2, 3)),
     lambda a, b: np.vstack([a, b]).reshape(2, 3, 3).sum(axis=(1, 2))),
])
def test_a_split_of_a_matrix_concatenation(program, shapes, want):
    rng = np.random.default_rng(7)
    a, b = (np.where(rng.random(s) < 0.5, rng.choice([1.0, -2.0, inf], s), 0.0) for s in shapes)
    A, B = ss.Tensor.from_numpy(a, "csr"), ss.Tensor.from_numpy(b, "coo")
    np.testing.assert_array_equal(evaluate(program, A=A, B=B)[0], want(a, b))
    kernel = ss.lower(program, "looplets", A=A, B=B)
    np.testing.assert_array_equal(kernel(A=A, B=B).to_numpy(), want(a, b))
    np.testing.assert_array_equal(kernel.interpret(A=A, B=B).to_numpy(), want(a, b))


@pytest.mark.parametrize("fmt", ["sparse", "dense"])
def test_the_array_front_end_splits_and_slices_a_concatenation_in_one_looplets_kernel(fmt):
    x, y = np.array([0, 1.0, 0, 2.0]), np.array([3.0, 0, 4.0, 0, 0, 6.0])
    X, Y = (xp.asarray(ss.Tensor.from_numpy(v, f)) for v, f in ((x, fmt), (y, "sparse")))
    for expr, want in [(xp.concat([X, Y, X]).reshape(-1, 7), np.concatenate([x, y, x]).reshape(-1, 7)),
                       (xp.concat([X, Y]).reshape(5, 2)[::-2], np.concatenate([x, y]).reshape(5, 2)[::-2]),
                       (xp.concat([X, Y])[1:8:3], np.concatenate([x, y])[1:8:3])]:
        kernel = ss.lower(expr, strategy="looplets")
        assert kernel.trace.find("materialize") == [], kernel.trace
        np.testing.assert_array_equal(kernel().to_numpy(), want)


def test_a_part_whose_index_another_operator_makes_is_refused_naming_the_lattice_strategy():
    # (a permissive read of a slice's operand would find its entries outside the slice)
    x, y = (ss.Tensor.from_numpy(np.arange(n, dtype=float), "sparse") for n in (6, 2))
    program = ("C[p, q] = split(concat((slice(x[a], a -> j, (5, -1, -2)), y[k]), (j, k) -> l), "
               "l -> (p:5, q:1))")
    with pytest.raises(StrategyError, match=re.escape("where each part reads its index j in its accesses "
                                                      "directly") + ".*or lower it with strategy='lattice'"):
        ss.lower(program, "looplets", x=x, y=y)


def test_a_part_with_a_reduction_is_refused_and_the_array_front_end_slices_the_parts():
    # (found by a fuzz: the row of A @ v past A's rows was 0, not (A @ v)[0] * 2, since coalesce took the
    # first part's sum, which holds 0 where its row is missing)
    A, v = np.array([[0, 0, 0], [0, 0, 1.0]]), np.arange(3.0)
    program = ("out[i] = slice(concat((sum[l](A[k, l] * v[l]), sum[n](A[m, n] * v[n]) * 2.0), (k, m) -> j), "
               "j -> i, (1, 4, 1))")
    with pytest.raises(StrategyError, match=re.escape("sum[l](A[k, l] * v[l]) is a reduction, whose value is "
                                                      "never missing") + ".*or lower it with strategy='lattice'"):
        ss.lower(program, "looplets", A=A, v=v)
    want = np.concatenate([A @ v, A @ v * 2])[1:]
    np.testing.assert_array_equal(ss.lower(program, A=A, v=v)(A=A, v=v).to_numpy(), want)
    np.testing.assert_array_equal(evaluate(program, A=A, v=v)[0], want)
    # (the array front end moves the slice onto the part it cuts, compiler.array.pushed_slices: one kernel)
    y = xp.asarray(A) @ v
    kernel = ss.lower(xp.concat([y, y * 2], axis=0)[1:], strategy="looplets")
    assert not kernel.trace.find("materialize") and kernel.trace.find("retry"), kernel.trace
    np.testing.assert_array_equal(kernel().to_numpy(), want)


def sequence_notes(kernel) -> list:
    return [s.note for s in kernel.trace.steps if s.stage == "lower:Sequence" and "combination" in (s.note or "")]


@pytest.mark.parametrize("fmts, most", [(("coo", "dcsr", "csr"), 2000), (("dense", "dense", "dense"), 100)])
def test_windows_of_a_split_concatenation_follow_in_order(fmts, most):
    """``reshape(concat([A, B, C], axis=1), (3, 3, 3))``: each part's window in ``k`` is ``[s - 3·j, s + |A| -
    3·j)``, so the parts' windows follow in order (their sizes are at least 0, a fact of the lowering) and a
    combination of two parts' windows, or of a part's after a later one's before, is provably empty. Before,
    every one of the 27 combinations was lowered: 6,274 lines of C for COO, DCSR and CSR, 203 all dense. The
    phase before the first part's window, ``[0, -3·j)``, is empty too: a for loop's index is at least its start
    (before the loops said so, 22 were proved empty, and the C skipped to ``-(j * 3)`` where ``j >= 0``)."""
    rng = np.random.default_rng(3)
    values = [np.where(rng.random((3, 3)) < 0.5, rng.choice([1.0, -2.0, nan, inf], (3, 3)), 0.0) for _ in fmts]
    arrays = [xp.asarray(ss.Tensor.from_numpy(v, f)) for v, f in zip(values, fmts)]
    expr, want = xp.reshape(xp.concat(arrays, axis=1), (3, 3, 3)), np.concatenate(values, axis=1).reshape(3, 3, 3)
    kernel = ss.lower(expr, strategy="looplets")
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
    np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
    assert "27 phase combination(s), 23 of them provably empty" in " ".join(sequence_notes(kernel))
    assert "-(j" not in kernel.c_source
    assert len(kernel.c_source.splitlines()) < most, len(kernel.c_source.splitlines())
    facts = [r["fact"] for s in kernel.trace.steps if s.stage == "int-facts" for r in s.data["facts"]]
    assert {"0 <= A1_size", "0 <= B1_size", "0 <= C1_size"} <= set(facts), facts
    assert any(re.fullmatch(r"0 <= j(_\d+)? <= 2", f) for f in facts), facts


def split_of_coo_parts(n, fill, seed, rows=3):
    """``reshape(concat(parts, axis=1), (rows, n, 3))`` of ``n`` COO parts of ``fill`` (NaN and ±inf stored), and
    what numpy makes of it."""
    rng = np.random.default_rng(seed)
    values = [np.where(rng.random((rows, 3)) < 0.5, rng.choice([1.0, -2.0, nan, inf, -inf], (rows, 3)), fill)
              for _ in range(n)]
    arrays = [xp.asarray(ss.Tensor.from_numpy(v, "coo", fill=fill)) for v in values]
    return xp.reshape(xp.concat(arrays, axis=1), (rows, n, 3)), np.concatenate(values, axis=1).reshape(rows, n, 3)


@pytest.mark.parametrize("fill", [0.0, nan, -inf])
def test_a_split_of_coo_parts_merges_their_row_walks_into_one_step(fill):
    """The rows of three or more COO parts are walks above fibers, each then its fill: merged
    (:mod:`compiler.looplets.merged_walks`), one step of one case. A part's fill past its entries, under the
    concatenation's window, is a run of a fill fiber (``Run(A.fill[mode 1])``), not a ``Fill``: the walks were not
    taken as mergeable, and each step lowered a case for every subset of the parts there, each with the loop
    over the split's groups inside (three parts 1,754 lines of C, four 6,307 in 12 s; now 371, 447 and, five, 523:
    the lattice strategy's are 368, 449 and 530)."""
    lines = {}
    for n in (3, 4, 5):
        expr, want = split_of_coo_parts(n, fill, n)
        with np.errstate(invalid="ignore"):
            kernel = ss.lower(expr, strategy="looplets", checked=True)
            got = kernel()
            got.validate()
            np.testing.assert_array_equal(got.to_numpy(), want)
            np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
            np.testing.assert_array_equal(evaluate(kernel.program, **kernel.arguments)[0], want)
        notes = [s.note for s in kernel.trace.steps if s.stage == "lower:Sequence"]
        assert any(f"{n} walks merged into one loop" in (note or "") for note in notes), notes
        # (one case a step: no test of which parts end at it, two at a time)
        assert not re.search(r"q\w+_end == step_stop && q\w+_end == step_stop", kernel.c_source)
        lines[n] = len(kernel.c_source.splitlines())
    assert lines[5] - lines[4] <= lines[4] - lines[3] + 10 and lines[5] < 2 * lines[3], lines


@pytest.mark.parametrize("rows, seed", [(0, 1), (1, 2), (4, 3)])
def test_a_split_of_merged_coo_parts_with_few_or_no_rows(rows, seed):
    expr, want = split_of_coo_parts(4, 1.0, seed, rows)
    kernel = ss.lower(expr, strategy="looplets", checked=True)
    np.testing.assert_array_equal(kernel().to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)
