"""Sums under an operator into a sparse output of 3 or more modes where a sum covers only some of the output's
modes (issue 30, compiler.lattice.seqlower.reordered and seqworkspace.split_sums): ``sum(stack, axis=0) +
sum(stack2, axis=(0, 3))[:, :, None]``, or such a partial sum times a plain 3-D operand. A sum over every mode is
kept as a Dense level over SparseLists, its terms sorted by key (compiler.lattice.seqsumsort); one over two of
them in sparse rows, a CSR (compiler.lattice.seqsumrows); one over one of them in a dense vector; the output's
loops read them after. On main each was refused (the sums' six loops were not tried in any order, and a sum over
two of three modes was not kept sparse), and the array front end retried: the stacks materialized. Each kernel
against the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's interpreter
(one_kernel), the array expressions against numpy too."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from tests.compiler.lattice.split_kernels import operand
from tests.compiler.lattice.test_seq_concat_fills import tensor
from tests.compiler.lattice.test_seq_sum3d import OUTPUTS, STACK, one_array_kernel, summed
from tests.compiler.lattice.test_seqemit import run_all

nan, inf = np.nan, np.inf

#: a sum over the output's first two modes, over its first and last, over its first only
ROWS = "sum[p, o](concat((B[q, j, m, o], B1[r, j, m, o]), (q, r) -> p))"
ENDS = "sum[p, o](concat((B[q, j, o, n], B1[r, j, o, n]), (q, r) -> p))"
FIRST = "sum[t, u, v](concat((B[x, j, u, v], B1[y, j, u, v]), (x, y) -> t))"


def reads(program, seed, fills=(0.0, 0.0), density=0.5, shapes=((2, 2, 3, 4), (1, 2, 3, 4))):
    """The tensors ``program`` reads: the stack's parts A, A1, the partial sum's B, B1 (4-D, NaN and ±inf among
    their stored values) and a plain 3-D D, of ``fills``."""
    made = {"A": tensor(shapes[0], "csf", seed, fills[0], density, odd=(nan, inf)),
            "A1": tensor(shapes[1], "coo", seed + 1, fills[0], density, odd=(-inf,)),
            "B": tensor(shapes[0], "coo", seed + 2, fills[1], density, odd=(inf,)),
            "B1": tensor(shapes[1], "csf", seed + 3, fills[1], density, odd=(nan,)),
            "D": tensor(shapes[0][1:], "csf", seed + 4, fills[1], density, odd=(-inf,))}
    return {t: x for t, x in made.items() if f"{t}[" in program}


def kept(k) -> str:
    """What the trace's loop-order step says the workspaces are kept as."""
    (step,) = k.trace.find("loop-order")
    return step.note


@pytest.mark.parametrize("out", OUTPUTS)
@pytest.mark.parametrize("program, how", [
    (f"c[j, m, n] = {STACK} + {ROWS}", "into w2[j, m], bucketed by j"),
    (f"c[j, m, n] = {STACK} * {ENDS}", "into w2[j, n], bucketed by j"),
    (f"c[j, m, n] = {STACK} - {FIRST}", "into w2[j] of 2 entries"),
    (f"c[j, m, n] = {ROWS} * D[j, m, n]", "into w[j, m], bucketed by j"),
])
def test_a_sum_over_some_of_the_output_s_modes(program, how, out):
    k, _ = summed(program, out, vector=True, **reads(program, 10))
    assert how in kept(k), kept(k)
    if STACK in program:
        assert "kept as a Dense level over SparseLists (compiler.lattice.seqsumsort)" in kept(k)


@pytest.mark.parametrize("fills", [(0.0, 1.0), (1.0, nan), (nan, 0.0)])
@pytest.mark.parametrize("program", [f"c[j, m, n] = {STACK} + {ROWS}", f"c[j, m, n] = {ENDS} * D[j, m, n] + 1"])
def test_summands_of_other_fills(program, fills):
    summed(program, OUTPUTS[2], **reads(program, 20, fills, density=0.3))


@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("shapes", [((0, 2, 3, 4), (1, 2, 3, 4)), ((0, 2, 3, 4), (0, 2, 3, 4))])
def test_empty_and_all_fill_parts(shapes, out):
    program = f"c[j, m, n] = {STACK} + {ROWS}"
    summed(program, out, **reads(program, 30, shapes=shapes))
    summed(program, out, **reads(program, 31, fills=(1.0, 0.0), density=0.0))


@pytest.mark.parametrize("program, out", [(f"c[j, m, n] = {STACK} * 2 + {ROWS}", ss.coo(3)),
                                          (f"c[j, m, n] = {FIRST} - {STACK}", ss.csf(3))])
def test_the_cfir_interpreter(program, out):
    tensors = reads(program, 40)
    np.testing.assert_array_equal(run_all(program, tensors, out=out), ss.evaluate(program, **tensors)[0])


def test_the_orders_tried_keep_the_output_s_and_are_bounded():
    from compiler.lattice.seqlower import MOST_ORDERS, interleavings
    assert next(interleavings(("j", "m", "n"), ("i", "p"))) == ("i", "p", "j", "m", "n")
    # (three sums' seven loops: 840 orders keep j, m, n's; the first MOST_ORDERS are tried)
    assert len(list(interleavings(("j", "m", "n"), ("i", "p", "o", "s")))) == 840 > MOST_ORDERS


#: three sums, over all of c's modes but its first, over two, over none: 6 summed indices among j, m, n
THREE = f"c[j, m, n] = {STACK} + {ROWS} + {FIRST}"


@pytest.mark.parametrize("out", OUTPUTS[:3])
@pytest.mark.parametrize("fills", [(0.0, 0.0), (1.0, nan)])
def test_three_sums_past_the_cap_on_orders(fills, out):
    # (their 9 loops keeping j, m, n's order have 60480 orders; the first MOST_ORDERS run the 6 summed indices
    # first, o before j, m: B walked against its storage order. Each sum's loops ordered alone, then joined (4 + 12 +
    # 24 tries). On main refused, or found after 117 s trying them all)
    from compiler.lattice.seqlower import MOST_ORDERS, interleavings
    firsts = list(interleavings(("j", "m", "n"), ("i", "p", "o", "t", "u", "v")))[:MOST_ORDERS]
    assert not any(o.index("o") > o.index("m") for o in firsts)
    k, _ = summed(THREE, out, vector=True, **reads(THREE, 60, fills))
    assert k.trace.find("loop-order")[0].data["hoisted"] == ["i", "p", "t", "j", "m", "n", "o", "u", "v"]


# -- the array front end: one kernel, no retry, no materialized stack, no conversion ----------------------------


@pytest.mark.parametrize("out", ["csf", "coo"])
@pytest.mark.parametrize("fill, odd", [(0.0, (nan, inf)), (1.0, (-inf,)), (nan, (inf,))])
def test_a_sum_plus_a_partial_sum_broadcast(fill, odd, out):
    a, A = operand((2, 2, 3, 4), "csf", 50, fill=fill, odd=odd)
    a1, A1 = operand((1, 2, 3, 4), "coo", 51)
    b, B = operand((2, 2, 3, 4), "coo", 52, fill=fill, odd=odd)
    d, D = operand((2, 3, 4), "csf", 53, odd=(-inf,))
    with np.errstate(invalid="ignore"):
        s, t = np.concatenate([a, a1]).sum(axis=0), np.concatenate([b, a1]).sum(axis=(0, 3))
        S, T = xp.sum(xp.concat([A, A1]), axis=0), xp.sum(xp.concat([B, A1]), axis=(0, 3))
        k = one_array_kernel(S + T[:, :, None], s + t[:, :, None], out)
        assert "sparse rows first" in kept(k) and "sparse fibers first" in kept(k)
        k = one_array_kernel(T[:, :, None] * D, t[:, :, None] * d, out)
        assert "sparse rows first" in kept(k)
        # (and a third sum, over all but the first mode: past the cap on the orders tried)
        u, U = np.concatenate([b, a1]).sum(axis=(0, 2, 3)), xp.sum(xp.concat([B, A1]), axis=(0, 2, 3))
        one_array_kernel(S + T[:, :, None] + U[:, None, None], s + t[:, :, None] + u[:, None, None], out)


# -- any formats, fills, shapes and outputs -----------------------------------------------------------------


@st.composite
def partial_sums(draw):
    """``(program, tensors, out)``: a sum of a stack of 4-D parts plus (or times) a partial sum of another stack
    of drawn formats, fills, densities, odd values and depths, into a drawn 3-D sparse output."""
    partial = draw(st.sampled_from([ROWS, ENDS, FIRST]))
    program = (f"c[j, m, n] = {STACK}{draw(st.sampled_from([' + ', ' * ']))}{partial}"
               f"{draw(st.sampled_from(['', ' * 2 + 1']))}")
    depth = draw(st.integers(0, 3))
    tensors = {}
    for t in ("A", "A1", "B", "B1"):
        first = t in ("A", "B")
        tensors[t] = tensor((depth if first else draw(st.integers(0, 2)), 2, 2, 3),
                            # (the first part stored sparse: the output's loops would walk it against its order)
                            draw(st.sampled_from(["csf", "coo"] if first else ["csf", "coo", "dense"])),
                            draw(st.integers(0, 99)), draw(st.sampled_from([0.0, 1.0, nan])),
                            draw(st.sampled_from([0.0, 0.4, 1.0])), draw(st.sampled_from([(), (nan,), (inf, -inf)])))
    return program, tensors, draw(st.sampled_from(OUTPUTS))


@settings(max_examples=7, deadline=None)
@given(partial_sums())
def test_any_partial_sum_into_a_3d_sparse_output(case):
    program, tensors, out = case
    summed(program, out, vector=True, **tensors)


@pytest.mark.parametrize("out", OUTPUTS)
def test_an_empty_first_part_s_fill_is_no_value(out):
    """(fuzz-found) ``STACK * ROWS`` where ``B`` is empty and of fill NaN, ``B1`` of fill 0: the concatenation took
    its first part's fill, NaN, which none of its entries holds, so the output's fill was NaN and the lattice left
    an entry of -0 at it. A concatenation's fill is now its first non-empty part's (``Concat.fill_operand``), in
    evaluate and in both strategies."""
    program = f"c[j, m, n] = {STACK} * {ROWS}"
    tensors = {"A": tensor((1, 2, 2, 3), "csf", 1, 0.0, 0.4), "A1": tensor((1, 2, 2, 3), "coo", 2, 0.0, 0.4),
               "B": tensor((0, 2, 2, 3), "coo", 3, nan, 0.4), "B1": tensor((2, 2, 2, 3), "csf", 4, 0.0, 0.4)}
    assert ss.evaluate(program, **tensors)[1] == 0.0
    _, got = summed(program, out, **tensors)
    assert got.fill == 0.0
