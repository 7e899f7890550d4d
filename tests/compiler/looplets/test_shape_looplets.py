"""Shape operators lowered by the looplets strategy (wrappers: offsets by outer loops, windows,
permissive phases, one-step loops), each kernel against the dense oracle and numpy; the
refusals, the call-time shape checks and the trace."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.errors import ShapeError, StrategyError
from compiler.reference import evaluate
from compiler.testing import random_sparse
from compiler.trace import Trace

nan, inf = np.nan, np.inf

A = np.array([[0, 1.5, 0, 4.0], [2.0, 0, 3.0, 0], [0, 0, 0, 0]])         # 3 x 4, an empty row
B = np.array([[7.0, 0, 0, 1.0], [0, 0, 0, 0], [0, 5.0, 6.0, 0]])
v12 = np.array([0, 1.0, 0, 0, 2.0, 3.0, 0, 0, 0, 4.0, 0, 5.0])


def run(program, out=None, **arrays_and_formats):
    """The kernel's result (looplets) and the oracle's, for arrays given as (array, format[, fill])."""
    tensors, plain = {}, {}
    for name, spec in arrays_and_formats.items():
        arr, fmt, *fill = spec
        tensors[name] = ss.Tensor.from_numpy(arr, fmt, fill=fill[0] if fill else None)
        plain[name] = tensors[name]
    want, fill = evaluate(program, **plain)
    # (an output given a format has that format's fill: the oracle's here)
    formats = {} if out is None else {program.split("[")[0].strip(): ss.parse_format(out, ndim=want.ndim,
                                                                                       fill=fill.item())}
    kernel = ss.lower(program, "looplets", **tensors, **formats)
    got = kernel(**tensors)
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(got.fill, fill)
    return got, want, kernel


EXAMPLES = [  # (program, output format, inputs, numpy's answer)
    ("c[k] = collapse(A[i, j], (i, j) -> k)", "sparse", {"A": (A, "csr")}, A.ravel()),
    ("c[k] = collapse(A[i, j], (i, j) -> k)", "sparse", {"A": (A, "coo")}, A.ravel()),
    ("c[k] = collapse(A[i, j], (i, j) -> k)", "dense", {"A": (A, "dense")}, A.ravel()),
    ("c[k] = collapse(A[i, j], (j, i) -> k)", "sparse", {"A": (A, "csc")}, A.ravel(order="F")),
    ("c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", "sparse", {"A": (A, "csr"), "b": (v12, "sparse")},
     A.ravel() * v12),
    ("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", None, {"A": (A, "coo"), "b": (v12, "sparse")}, A.ravel() + v12),
    ("C[i, j] = split(b[k], k -> (i, j:4))", "csr", {"b": (v12, "sparse")}, v12.reshape(3, 4)),
    ("C[i, j] = split(b[k], k -> (i, j:4))", "coo", {"b": (v12, "sparse")}, v12.reshape(3, 4)),
    ("C[i, j] = split(b[k], k -> (i, j)) * B[i, j]", "csr", {"b": (v12, "sparse"), "B": (B, "csr")},
     v12.reshape(3, 4) * B),
    ("D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", "csr", {"A": (A, "csr"), "B": (B, "coo")}, np.hstack([A, B])),
    ("D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", "coo", {"A": (A, "coo"), "B": (B, "coo")}, np.hstack([A, B])),
    ("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", "csr", {"A": (A, "csr"), "B": (B, "csr")}, np.vstack([A, B])),
    ("D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", "dense", {"A": (A, "csc"), "B": (B, "csc")},
     np.hstack([A, B])),
    ("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", "coo", {"A": (A, "csc"), "B": (B, "csr")}, np.vstack([A, B])),
    ("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", "coo", {"A": (A, "csr"), "B": (B, "coo")}, np.vstack([A, B])),
    ("D[l, i] = concat((A[j, i], B[k, i], A[m, i]), (j, k, m) -> l)", "csr", {"A": (A, "csr"), "B": (B, "dense")},
     np.vstack([A, B, A])),
    ("d[l] = concat((a[j], b[k]), (j, k) -> l)", "sparse", {"a": (A[0], "sparse"), "b": (v12, "sparse")},
     np.concatenate([A[0], v12])),
    ("y[l] = sum[i](concat((A[j, i], B[k, i]), (j, k) -> l) * broadcast(l, x[i]))", None,
     {"A": (A, "csr"), "B": (B, "csr"), "x": (np.arange(4.0), "dense")}, np.vstack([A, B]) @ np.arange(4.0)),
    # (np.hstack([A, B]) @ x: the call refused it, x[l] read as x[j] in the first part taken for |x| = |j|)
    ("y[i] = sum[l](concat((A[i, j], B[i, k]), (j, k) -> l) * x[l])", None,
     {"A": (A, "csr"), "B": (B, "coo"), "x": (np.arange(8.0), "dense")}, np.hstack([A, B]) @ np.arange(8.0)),
    ("S[k, i] = slice(A[j, i], j -> k, (0, 3, 2))", "csr", {"A": (A, "csr")}, A[0:3:2]),
    ("S[k, i] = slice(A[j, i], j -> k, (1, 3, 1))", "csr", {"A": (A, "csr")}, A[1:3]),
    ("S[k, i] = slice(A[j, i], j -> k, (2, -1, -1))", "coo", {"A": (A, "csr")}, A[::-1]),
    ("S[i, k] = slice(A[i, j], j -> k, (3, -1, -2))", "csr", {"A": (A, "csc")}, A[:, 3::-2]),
    ("S[i, k] = slice(A[i, j], j -> k, (1, 4, 2))", "csr", {"A": (A, "csr")}, A[:, 1:4:2]),
    ("S[k, i] = slice(A[j, i], j -> k, (0, 3, 2)) * C[k, i]", "csr", {"A": (A, "csr"), "C": (B[:2], "csr")},
     A[0:3:2] * B[:2]),
    ("s[k] = slice(a[j], j -> k, (10, 0, -3))", "sparse", {"a": (v12, "sparse")}, v12[10:0:-3]),
    ("y[j] = A[1, j]", "sparse", {"A": (A, "csr")}, A[1]),
    ("y[i] = A[i, 3]", None, {"A": (A, "csc")}, A[:, 3]),
    ("Y[l, i] = broadcast(l:2, x[i])", "csr", {"x": (A[0], "sparse")}, np.broadcast_to(A[0], (2, 4))),
]


@pytest.mark.parametrize("program,out,inputs,expected", EXAMPLES)
def test_each_operator_against_numpy_and_the_oracle(program, out, inputs, expected):
    got, want, _ = run(program, out, **inputs)
    np.testing.assert_array_equal(want, expected)


def test_a_concat_of_different_fills_stores_the_second_fill_in_a_sparse_output():
    # (the output's fill is the first operand's; where B holds its fill 1, the result stores 1)
    got, _, _ = run("d[l] = concat((a[j], b[k]), (j, k) -> l)", "sparse",
                    a=(np.array([0, 2.0, 0]), "sparse"), b=(np.array([1.0, 3.0, 1.0]), "sparse", 1.0))
    np.testing.assert_array_equal(got.to_numpy(), [0, 2, 0, 1, 3, 1])
    assert got.fill == 0


def test_the_lattice_strategy_refuses_naming_looplets_and_no_strategy_then_chooses_looplets():
    T = ss.Tensor.from_numpy(A, "csr")
    # (the lattice strategy lowers shape operators through BURRITO's sequences, whose * is an intersection:
    # where a factor may hold NaN or inf, the other's absent 0 cannot skip it, so it walks their union;
    # it refused them once, naming looplets)
    a = ss.Tensor.from_numpy(np.array([[0, np.nan], [2.0, 0]]), "csr")
    b = ss.Tensor.from_numpy(np.array([[0, 0], [np.inf, 1.0]]), "csr")
    program = "d[k] = collapse(a[i, j] * b[i, j], (i, j) -> k)"
    for strategy in ("lattice", None):
        k = ss.lower(program, strategy, a=a, b=b)
        np.testing.assert_array_equal(k(a=a, b=b).to_numpy(), [0, np.nan, np.inf, 0])
    # (a sum of a summand of fill 1: the lattice folds the fill in for the entries it skips)
    F = ss.Tensor.from_numpy(A, "csr", fill=1.0)
    k = ss.lower("s[] = sum[j](A[0, j])", A=F)
    assert k.strategy == "lattice"
    np.testing.assert_array_equal(k(A=F).to_numpy(), A[0].sum())   # (A's zeros are stored: its fill is 1)
    assert ss.lower("y[j] = A[2, j] + 1.0", A=F).strategy == "lattice"     # (elementwise: any fill)
    # where it lowers the statement, no strategy chooses the lattice one
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k)", A=T)
    assert k.strategy == "lattice" and "lowered with the lattice strategy" in k.trace.steps[0].note
    np.testing.assert_array_equal(ss.einsum("y[j] = A[2, j]", A=T).to_numpy(), A[2])


@pytest.mark.parametrize("program,inputs,message", [
    ("C[j, i] = split(b[k], k -> (i, j:4))", {"b": (v12, "sparse")},
     "split(b[k], k -> (i, j:4)): looplets read k = i·|j| + j as an offset of the loop over j by the one over i, "
     "so j must be the inner loop"),
    # (two flattens of k are walked by one pair of loops, tests/.../test_shape_looplets_flatten_pairs.py: where
    # one is a CSC's row-major one, its walk beside a CSR's is discordant; their sum runs in two passes)
    ("c[k] = collapse(A[i, j], (i, j) -> k) * collapse(Z[p, q], (p, q) -> k)",
     {"A": (A, "csr"), "Z": (A + 1.0, "csc")},
     "collapse(Z[p, q], (p, q) -> k): Z stores q before p, but the collapse walks p outside q (the first listed "
     "index is the major one): a discordant walk of its sparse levels; store Z with p first, or collapse (q, p) -> k"),
    # (summed beside a sparse b, which would be read out of order: alone, or beside any b into an output,
    # A is walked row by row, a sparse b copied whole first)
    ("s[] = sum[k](collapse(A[i, j], (j, i) -> k) * b[k])", {"A": (A, "csr"), "b": (v12, "sparse")},
     "A stores i before j, but the collapse walks j outside i (the first listed index is the major one): a "
     "discordant walk of its sparse levels; store A with j first, or collapse (i, j) -> k"),
    ("C[i, j] = split(b[k], k -> (i:3, j))", {"b": (v12, "sparse")},
     "a split given one extent makes the other a quotient of extents: give both, as in k -> (i:m, j:n)"),
    # (a COO output: a dense or CSC one takes the loop over i outside k's, a CSR one by a scatter)
    ("S[k, i] = slice(A[j, i], j -> k, (0, 3, 2))", {"A": (A, "csc"), "S": (None, "coo")},
     "A[j, i] is stored with i before j, and the loop over i is inside the one over k"),
    # (a reduction's loop is inside the statement's: k outside i, a column-major walk of the split)
    ("c[k] = d[k] + sum[i](split(b[m], m -> (i, k:4)))", {"b": (v12, "sparse"), "d": (v12[:4], "sparse")},
     "split(b[m], m -> (i, k:4)): looplets read m = i·|k| + k as an offset of the loop over k by the one over i, "
     "so k must be the inner loop; here the kernel's loops put k outside i"),
])
def test_what_no_wrapper_expresses_is_refused_saying_why(program, inputs, message):
    tensors = {n: ss.Tensor.from_numpy(a, f) for n, (a, f) in inputs.items() if a is not None}
    outputs = {n: f for n, (a, f) in inputs.items() if a is None}    # (an output's format)
    with pytest.raises(StrategyError, match=re.escape(message)):
        ss.lower(program, "looplets", **tensors, **outputs)
    evaluate(program, **tensors)   # (the oracle computes it)


def test_a_split_into_a_discordant_sparse_output_is_built_in_loop_order_and_converted():
    """split(b, k -> (i, j)) walks rows; a CSC output is built row-major and converted after the
    call (the trace's output-order step says so), as every output written out of its order is."""
    k = ss.lower("C[i, j] = split(b[k], k -> (i, j:4))", "looplets", b=ss.Tensor.from_numpy(v12, "sparse"),
                 C="csc")
    assert any(s.stage == "output-order" for s in k.trace.steps)
    out = k(b=ss.Tensor.from_numpy(v12, "sparse"))
    assert out.format.shorthand == "csc"
    np.testing.assert_array_equal(out.to_numpy(), v12.reshape(3, 4))


def test_shapes_are_checked_when_lowering_and_at_each_call():
    program = "c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"
    bad = ss.Tensor.from_numpy(np.ones(11), "sparse")
    T = ss.Tensor.from_numpy(A, "csr")
    message = "collapse(A[i, j], (i, j) -> k): |k| = |i|·|j| = 3·4 = 12, but k has extent 11 in b[k] (mode 0)"
    with pytest.raises(ShapeError, match=re.escape(message)):
        ss.lower(program, "looplets", A=T, b=bad)
    k = ss.lower(program, "looplets", A="csr", b="sparse")   # formats only: checked at the call
    with pytest.raises(ShapeError, match=re.escape(message)):
        k(A=T, b=bad)
    k = ss.lower("S[k, i] = slice(A[j, i], j -> k, (0, 3, 1))", "looplets", A="csr")
    with pytest.raises(ShapeError, match=re.escape("0 <= start <= stop <= 2")):
        k(A=ss.Tensor.from_numpy(A[:2], "csr"))


def test_the_trace_shows_the_extents_and_the_wrappers_and_round_trips():
    T = ss.Tensor.from_numpy(A, "csr")
    k = ss.lower("c[k] = collapse(A[i, j], (i, j) -> k) + b[k]", "looplets", A=T, b="sparse", trace=Trace())
    steps = {s.stage: s for s in k.trace.steps}
    assert steps["shapes"].note == "extents: i: 3, j: 4, k: 12"   # (b's extent is checked at each call)
    assert str(steps["shapes"].after) == "c[k] = collapse(A[i, j], (i, j) -> k) + b[k]"
    assert "c[j + i * size(A, 1)] = A[i, j] + b[j + i * size(A, 1)]" in steps["shape-operators"].after
    again = Trace.from_json(k.trace.to_json())
    assert [s.stage for s in again.steps] == [s.stage for s in k.trace.steps]


# -- properties: shapes, formats, fills, steps (negative too), empty results, all-fill inputs -------

MATRIX = ["dense", "csr", "csc", "coo"]
FILLS = [0.0, 1.0, nan, inf]


@st.composite
def matrices(draw, rows=None, cols=None):
    n = draw(st.integers(0, 4)) if rows is None else rows
    m = draw(st.integers(0, 4)) if cols is None else cols
    fill = draw(st.sampled_from(FILLS))
    density = draw(st.sampled_from([0.0, 0.4, 1.0]))      # all-fill, some, none
    cells = draw(st.lists(st.integers(-3, 3).map(float), min_size=n * m, max_size=n * m))
    mask = draw(st.lists(st.floats(0, 1), min_size=n * m, max_size=n * m))
    arr = np.array([c if p < density else fill for c, p in zip(cells, mask)]).reshape(n, m)
    return arr, draw(st.sampled_from(MATRIX)), fill


SLOW = settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SLOW
@given(matrices(), st.sampled_from(["dense", "sparse"]), st.booleans())
def test_collapse_of_any_matrix(a, out, column_major):
    arr, fmt, fill = a
    order = "(j, i)" if column_major else "(i, j)"
    # (stored minor index first: walked so, a sparse output through a dense workspace)
    got, want, _ = run(f"c[k] = collapse(A[i, j], {order} -> k)", out, A=(arr, fmt, fill))
    np.testing.assert_array_equal(want, arr.ravel(order="F" if column_major else "C"))


@SLOW
@given(st.data(), st.integers(0, 4), st.integers(1, 4), st.sampled_from(["csr", "coo", "dense"]))
def test_split_of_any_vector(data, n, m, out):
    arr, _, fill = data.draw(matrices(rows=n, cols=m))
    v = arr.ravel()
    got, want, _ = run(f"C[i, j] = split(b[k], k -> (i, j:{m}))", out, b=(v, "sparse", fill))
    np.testing.assert_array_equal(want, v.reshape(n, m))


@SLOW
@given(st.data(), st.integers(0, 3), st.booleans(), st.sampled_from(["csr", "coo", "dense"]))
def test_concat_of_any_two_matrices(data, m, vertical, out):
    a = data.draw(matrices(cols=m) if vertical else matrices(rows=m))
    b = data.draw(matrices(cols=m) if vertical else matrices(rows=m))
    program = ("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)" if vertical
               else "D[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)")
    got, want, _ = run(program, out, A=a, B=b)
    np.testing.assert_array_equal(want, (np.vstack if vertical else np.hstack)([a[0], b[0]]))


def draw_slice(data, n: int, steps: list) -> tuple[int, int, int]:
    """A slice ``(start, stop, step)`` of an axis of length ``n``, its step one of ``steps``: from
    ``start`` up to ``stop``, or down to it (-1: past the first element) for a negative step."""
    step = data.draw(st.sampled_from(steps))
    if step > 0:
        start = data.draw(st.integers(0, n))
        return start, data.draw(st.integers(start, n)), step
    stop = data.draw(st.integers(-1, max(-1, n - 1)))
    return data.draw(st.integers(stop, max(stop, n - 1))), stop, step


@SLOW
@given(matrices(), st.data(), st.sampled_from(["csr", "coo", "dense"]), st.booleans())
@example(a=(np.arange(12.0).reshape(4, 3), "csr", 0.0), data=None, out="csr", rows=True)
# (found by this property: a strided row slice of CSC was a ProgramError about the generated loops)
@example(a=(np.arange(6.0).reshape(3, 2), "csc", 0.0), data=None, out="csr", rows=True)
# (a fresh draw: a slice of step 1 of CSC's rows is refused too, as discordant; the test expected a kernel)
@example(a=(np.zeros((0, 0)), "csc", 0.0), data=[0, 0, 1], out="csr", rows=True)
def test_slices_with_any_step(a, data, out, rows):
    arr, fmt, fill = a
    n = arr.shape[0] if rows else arr.shape[1]
    if data is None:
        start, stop, step = n - 1, -1, -2
    elif isinstance(data, list):
        start, stop, step = data
    else:
        start, stop, step = draw_slice(data, n, [-3, -2, -1, 1, 2, 3])
    program = (f"S[k, i] = slice(A[j, i], j -> k, ({start}, {stop}, {step}))" if rows
               else f"S[i, k] = slice(A[i, j], j -> k, ({start}, {stop}, {step}))")
    if fmt == "csc" and rows and out == "coo":
        # (a COO output's loops run k outside i, inside which CSC's columns are looped: A's walk of j,
        # strided or not, would run against its storage; the refusal names the lattice strategy. A dense
        # output takes the loop over i outside k (test_shape_looplets_csc_row_windows.py), a CSR one by a
        # scatter (test_shape_looplets_csc_windows.py))
        with pytest.raises(StrategyError, match="walk of j would be discordant.*strategy='lattice'"):
            run(program, out, A=(arr, fmt, fill))
        return
    got, want, _ = run(program, out, A=(arr, fmt, fill))
    kept = list(range(start, stop, step))   # (no wrap-around: -1 stops below 0)
    np.testing.assert_array_equal(want, arr[kept] if rows else arr[:, kept])


def test_a_concats_second_loop_starts_at_zero_in_the_c():
    # (before: for (int64_t k = 0 > (-A0_size) ? 0 : -A0_size; ...), a bound no size can reach)
    T = ss.Tensor.from_numpy(A, "csr")
    k = ss.lower("D[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", "looplets", A=T, B=T, D="csr")
    assert "for (int64_t k = 0; k < B0_size; k++)" in k.c_source


def test_a_collapse_inside_a_concat_walks_its_loops_as_the_parts():
    """concat((collapse(A), b)) makes the collapsed index a part of the concatenated one: the part's
    loop is the collapse's two, walking A in storage order (it was a KeyError from inside the
    lowering, found by the array front end, then refused); a CSC collapsed row-major is refused."""
    prog = "c[l] = concat((collapse(A[i, j], (i, j) -> k), b[m]), (k, m) -> l)"
    tensors = dict(A=ss.Tensor.from_numpy(A, "csr"), b=ss.Tensor.from_numpy(np.ones(3), "dense"))
    kernel = ss.lower(prog, "looplets", **tensors)
    want = np.concatenate([A.reshape(-1), np.ones(3)])
    np.testing.assert_array_equal(kernel(**tensors).to_numpy(), want)
    np.testing.assert_array_equal(evaluate(prog, **tensors)[0], want)
    assert not kernel.trace.find("gather")
    with pytest.raises(StrategyError, match="discordant walk"):
        ss.lower(prog, "looplets", A=ss.Tensor.from_numpy(A, "csc"), b=tensors["b"])


INNER_REDUCTIONS = [
    "y[l] = concat((a[i], b[j]), (i, j) -> l) + sum[m](x[m])",            # no free index: in each part's loop
    "Y[k, i] = slice(P[j, i], j -> k, (0, 3, 1)) * sum[m](Q[k, m])",      # a free index the slice's loop binds
    "c[k] = collapse(P[i, j], (i, j) -> k) * max[m](x[m])",
    "y[l] = concat((a[i], b[j]), (i, j) -> l) * sum[m](sum[n](Q[m, n]) * a[m])",   # nested
    "y[l] = concat((a[i], b[j]), (i, j) -> l) + any[m](x[m] > 1)",        # one that stops early
]


@pytest.mark.parametrize("fmt", ["csr", "dense", "coo"])
@pytest.mark.parametrize("program", INNER_REDUCTIONS)
def test_a_reduction_inside_the_right_hand_side_of_shape_operators_is_computed_into_a_scalar(program, fmt):
    # (it was refused: 'the looplet strategy lowers index notation whose reductions are at the top')
    rng = np.random.default_rng(2)
    P, Q = random_sparse((3, 4), 0.5, rng), random_sparse((3, 5), 0.5, rng)
    tensors = dict(P=ss.Tensor.from_numpy(P, fmt), Q=ss.Tensor.from_numpy(Q, fmt),
                   a=ss.Tensor.from_numpy(random_sparse((3,), 0.5, rng), "sparse"),
                   b=ss.Tensor.from_numpy(random_sparse((2,), 0.5, rng), "sparse"),
                   x=rng.integers(-2, 3, 5).astype(float))
    want, _ = evaluate(program, **tensors)
    k = ss.lower(program, "looplets", **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)
    loops = next(s for s in k.trace.steps if s.stage == "shape-operators").after
    assert "t .= " in str(loops) and "t[] " in str(loops)


def test_a_scalar_under_a_shape_operator_holds_what_its_reduction_makes():
    # inf + -inf is NaN: min(-inf, t) is NaN where v holds its fill -inf
    M = ss.Tensor.from_numpy(np.array([[inf, -inf, 0], [1.0, 0, 2.0]]), "csr")
    v = ss.Tensor.from_numpy(np.array([-inf, -inf]), "sparse", fill=-inf)
    w = ss.Tensor.from_numpy(np.array([-inf]), "sparse", fill=-inf)
    program = "y[l] = concat((v[i], w[j]), (i, j) -> l) + min(-inf, sum[m](sum[n](M[m, n])))"
    want, _ = evaluate(program, M=M, v=v, w=w)
    got = ss.lower(program, "looplets", M=M, v=v, w=w)(M=M, v=v, w=w).to_numpy()
    np.testing.assert_array_equal(got, want)


def test_a_reduction_of_no_free_index_is_computed_once_before_the_loops():
    a = ss.Tensor.from_numpy(np.array([1.0, 0, 2.0]), "sparse")
    b, x = ss.Tensor.from_numpy(np.array([0, 3.0]), "sparse"), np.array([1.0, 2.0, -1.0])
    program = "y[l] = concat((a[i], b[j]), (i, j) -> l) + sum[m](x[m])"
    k = ss.lower(program, "looplets", a=a, b=b, x=x)
    loops = str(next(s for s in k.trace.steps if s.stage == "shape-operators").after)
    assert loops.startswith("t .= 0.0\nfor m = 0:x0_size\n  t[] += x[m]\nfor i = "), loops
    assert loops.count("t .=") == 1    # (both parts of the concat read it)
    np.testing.assert_array_equal(k(a=a, b=b, x=x).to_numpy(), [3.0, 2.0, 4.0, 2.0, 5.0])


# -- a shape operator inside a reduction: its loops planned as the statement's are ------------------

C4 = np.array([[1.0, 0, -2.0], [0, 0, 3.0], [4.0, 0, 0], [0, 5.0, 0]])     # 4 x 3
SHAPED_REDUCTIONS = [  # (program, inputs, numpy's answer); each was refused (or failed at the call)
    # sum(A[::2, :] * 2) + 1: a strided slice of a reduced index, under an operator
    ("s[] = sum[i, j](slice(A[k, j], k -> i, (0, 3, 2)) * 2.0) + 1.0", {"A": A}, (A[::2] * 2).sum() + 1),
    # np.vstack([A, B]).sum(axis=1) + 1: the reduced index is the inner one, the concat's the output's
    ("y[i] = sum[j](concat((A[k, j], B[l, j]), (k, l) -> i)) + 1.0", {"A": A, "B": B},
     np.vstack([A, B]).sum(axis=1) + 1),
    # np.hstack([A, B]) @ x + b: a concatenated reduced index, one loop per part
    ("y[i] = sum[l](concat((A[i, j], B[i, k]), (j, k) -> l) * x[l]) + b[i]",
     {"A": A, "B": B, "x": np.arange(8.0) - 3, "b": np.array([1.0, 0, -1.0])},
     np.hstack([A, B]) @ (np.arange(8.0) - 3) + np.array([1.0, 0, -1.0])),
    # a collapse inside a sum: A.ravel() @ v, times b (a reduction of no free index, computed once)
    ("y[i] = b[i] * sum[k](collapse(A[p, q], (p, q) -> k) * v[k])", {"A": A, "b": np.array([1.0, 0, -1.0]),
                                                                       "v": v12},
     np.array([1.0, 0, -1.0]) * (A.ravel() @ v12)),
    # A[:, 3::-2].sum(axis=1) - b: a reversed strided slice of the reduced index
    ("y[i] = sum[k](slice(A[i, j], j -> k, (3, -1, -2))) - b[i]", {"A": A, "b": np.array([1.0, 0, -1.0])},
     A[:, 3::-2].sum(axis=1) - np.array([1.0, 0, -1.0])),
    # nested: the inner reduction's concat under the outer one's
    ("y[i] = b[i] + sum[m](sum[l](concat((A[i, j], B[i, k]), (j, k) -> l)) * c[m])",
     {"A": A, "B": B, "b": np.array([1.0, 0, -1.0]), "c": np.array([2.0, -1.0])},
     np.array([1.0, 0, -1.0]) + np.hstack([A, B]).sum(axis=1) * 1.0),
    # two collapses, each in its own reduction: each reduction's loop becomes two
    ("s[] = sum[k](collapse(A[i, j], (i, j) -> k)) * sum[m](collapse(C[p, q], (p, q) -> m))", {"A": A, "C": C4},
     A.sum() * C4.sum()),
]


@pytest.mark.parametrize("fmt", ["csr", "coo", "dense"])
@pytest.mark.parametrize("program,inputs,expected", SHAPED_REDUCTIONS)
def test_a_shape_operator_inside_a_reduction_is_lowered_by_looplets(program, inputs, expected, fmt):
    tensors = {n: ss.Tensor.from_numpy(a, fmt if a.ndim == 2 else "sparse") for n, a in inputs.items()}
    want, _ = evaluate(program, **tensors)
    np.testing.assert_allclose(want, expected)
    k = ss.lower(program, "looplets", **tensors)
    np.testing.assert_allclose(k(**tensors).to_numpy(), want)
    np.testing.assert_allclose(k.interpret(**tensors).to_numpy(), want)


def test_a_concatenated_reduced_index_is_one_loop_per_part_in_the_c():
    T = ss.Tensor.from_numpy(A, "csr")
    x = np.arange(8.0)
    k = ss.lower("y[i] = sum[l](concat((A[i, j], B[i, k]), (j, k) -> l) * x[l]) * 2.0 + b[i]", "looplets",
                 A=T, B=T, x=x, b=np.ones(3))
    loops = str(next(s for s in k.trace.steps if s.stage == "shape-operators").after)
    assert "for j = 0:A1_size\n" in loops and "for k = 0:B1_size\n" in loops and "x[k + size(A, 1)]" in loops, loops
    np.testing.assert_array_equal(k(A=T, B=T, x=x, b=np.ones(3)).to_numpy(), np.hstack([A, A]) @ x * 2 + 1)


def test_what_no_wrapper_expresses_names_the_lattice_strategy():
    b = ss.Tensor.from_numpy(v12, "sparse")
    with pytest.raises(StrategyError, match=re.escape("here the kernel's loops put k outside i (a column-major "
                                                      "walk of a row-major split is discordant); or lower it "
                                                      "with strategy='lattice'")):
        ss.lower("C[k, i] = split(b[m], m -> (i, k:4))", "looplets", b=b)


@SLOW
@given(matrices(), st.data())
@example(a=(A, "csr", 0.0), data=None)
def test_a_strided_slice_or_a_concat_inside_a_reduction_of_any_matrix(a, data):
    arr, fmt, fill = a
    n = arr.shape[1]
    if data is None:
        start, stop, step, tail = 3, -1, -2, 1.0
    else:
        start, stop, step = draw_slice(data, n, [-2, -1, 2, 3])
        tail = data.draw(st.sampled_from([0.0, 1.0, -inf]))
    tensors = {"A": ss.Tensor.from_numpy(arr, fmt, fill=fill)}
    kept = list(range(start, stop, step))
    sliced = arr[:, kept]
    program = f"y[i] = sum[k](slice(A[i, j], j -> k, ({start}, {stop}, {step}))) + {tail}"
    want, _ = evaluate(program, **tensors)
    with np.errstate(invalid="ignore"):   # (inf + -inf)
        np.testing.assert_array_equal(want, sliced.sum(axis=1) + tail)
    np.testing.assert_array_equal(ss.lower(program, "looplets", **tensors)(**tensors).to_numpy(), want)
    # np.hstack([A, A[:, lo:hi]]).max(axis=1) * 2: a concat of a reduced index (of a window: a
    # strided slice inside a concat is refused, the slice's loop being a part of the concat's)
    lo, hi = sorted((min(max(start, 0), n), min(max(stop, 0), n)))
    program = f"y[i] = max[l](concat((A[i, j], slice(A[i, p], p -> q, ({lo}, {hi}, 1))), (j, q) -> l)) * 2.0"
    want, _ = evaluate(program, **tensors)
    np.testing.assert_array_equal(want, np.hstack([arr, arr[:, lo:hi]]).max(axis=1, initial=-inf) * 2)
    np.testing.assert_array_equal(ss.lower(program, "looplets", **tensors)(**tensors).to_numpy(), want)
