"""Scalars of loop programs: Scalar, SparseScalar and ShortCircuitScalar (Finch §3.3.3).

Each kernel is checked against the dense oracle (compiler.reference.evaluate, or numpy),
and the differential tests run every kernel in checked mode too.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.algebra import choose, is_annihilator, lookup, reduction_annihilator
from compiler.backend.c_emitter import emit_c_with_provenance
from compiler.imperative.ir import If, Tagged
from compiler.imperative.traverse import walk as ir_walk
from compiler.levels import (Dense, Element, RunList, SparseBand, SparseBlockList, SparseByteMap, SparseCOO,
                             SparseHash, SparseList, SparseRunList)
from compiler.looplets import ProgramError, compile_program, loop_program
from compiler.looplets.scalars import Scalar, ShortCircuitScalar, SparseScalar
from compiler.reference import evaluate

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run(prog, checked=False, **tensors):
    """Compile (formats and inputs in ``tensors``) and call with the inputs."""
    k = compile_program(prog, checked=checked, **tensors)
    return k(**{n: t for n, t in tensors.items() if isinstance(t, Tensor)}), k


# --------------------------------------------------------------------------- formats and algebra


def test_scalar_formats_name_their_kind_and_infer_the_dtype():
    assert Scalar(0.0).dtype == np.float64 and Scalar(0).dtype == np.int64 and Scalar(False).dtype == np.bool_
    assert str(ShortCircuitScalar(-1)) == "ShortCircuitScalar(-1)"
    assert str(SparseScalar(0.0, dtype="float32")) == "SparseScalar(0.0, dtype='float32')"
    kinds = [Scalar(0.0), SparseScalar(0.0), ShortCircuitScalar(0.0)]
    assert len({hash(k) for k in kinds}) == 3 and kinds[0] != kinds[1] != kinds[2]
    assert Scalar(0.0) == Scalar(0.0) and Scalar(0.0) != Scalar(1.0)
    assert Scalar(2.0).plain().ndim == 0 and Scalar(2.0).plain().fill == 2.0


def test_reduction_annihilators():
    assert reduction_annihilator(choose(0)) == ("!=", 0)
    assert reduction_annihilator(lookup("*")) == ("==", 0)
    assert reduction_annihilator(lookup("+")) is None
    # pow's annihilator 1 is on the left (the accumulator): 1 ** y == 1
    assert reduction_annihilator(lookup("pow")) == ("==", 1)
    assert is_annihilator(choose(-1), 4) and not is_annihilator(choose(-1), -1)
    assert is_annihilator(lookup("and"), False) and not is_annihilator(lookup("and"), True)
    assert is_annihilator(lookup("max"), np.inf) and is_annihilator(lookup("max"), np.iinfo(np.int64).max)
    assert not is_annihilator(lookup("max"), 3.0)
    assert not is_annihilator(lookup("+"), 0.0)


# --------------------------------------------------------------------------- Scalar


@loop_program
def dot_then_scale(y, x, t=Scalar(0.0)):
    t[...] = 0.0
    for i in _:
        t += x[i] * x[i]
    for i in _:
        y[i] = x[i] * t


def test_scalar_temporary_lives_in_a_c_local():
    xd = np.array([0, 1.0, 0, 2.0, 0])
    x = Tensor.from_numpy(xd, "sparse")
    y, k = run(dot_then_scale, y="dense", x=x)
    np.testing.assert_allclose(y.to_numpy(), xd * (xd @ xd))
    assert "double t_2 = 0.0;" in k.c_source  # a local, no scratch array
    assert "t_val" not in k.c_source


@loop_program
def product(p, A):
    p[...] = 1.0
    for j in _:
        p *= A[j]


def test_scalar_kernel_output_of_each_kind():
    A = Tensor.from_numpy(np.array([2.0, 0, 3.0, 0.5]), "sparse")
    for kind in (Scalar, SparseScalar, ShortCircuitScalar):
        got, k = run(product, p=kind(1.0), A=A)
        assert got == 0.0  # the fill region multiplies by 0
    got, _ = run(product, p=Scalar(0.0), A=Tensor.from_numpy(np.array([2.0, 3.0, 0.5]), "dense"))
    assert got == 3.0


# --------------------------------------------------------------------------- SparseScalar


@loop_program
def sparse_read(y, x, t=SparseScalar(0.0)):
    t[...] = 0.0
    for i in _:
        if x[i] > 2:
            t += x[i]
    for i in _:
        y[i] = x[i] * t


def test_sparse_scalar_read_is_a_switch_on_its_dirty_bit():
    xs = [np.array([0, 3.0, 0, -1.0, 4.0]), np.array([0, 1.0, 0, 2.0, 0])]  # t dirty, then clean
    for xd in xs:
        x = Tensor.from_numpy(xd, "sparse")
        y, k = run(sparse_read, y="sparse", x=x)
        np.testing.assert_allclose(y.to_numpy(), xd * xd[xd > 2].sum())
    src = k.c_source
    assert "bool t_dirty = false;" in src and "t_dirty = true;" in src
    # the clean branch writes x * 0.0 = the fill of y: it vanishes, so there is no else branch
    split = [n for n in ir_walk(k.function.body) if isinstance(n, If) and str(n.cond) == "t_dirty"]
    assert len(split) == 1 and split[0].otherwise is None and "if (t_dirty) {" in src
    steps = [s for s in k.trace.steps if s.stage == "lower:Switch" and "SparseScalar t" in s.note]
    assert steps and steps[0].artifacts[0].kind == "looplet-nest"
    assert "Case(t_dirty)" in steps[0].artifacts[0].text and "Fill(0.0)" in steps[0].artifacts[0].text


# --------------------------------------------------------------------------- ShortCircuitScalar


@loop_program
def has_negative(p, x):
    for i in _:
        p <<= any, x[i] < 0


def test_any_reduction_breaks_out_of_the_loop():
    for xd in (np.array([0, 1.0, 0, -2.0, 0, 3.0]), np.array([0, 1.0, 0, 2.0]), np.zeros(0)):
        x = Tensor.from_numpy(xd, "sparse")
        got, k = run(has_negative, p=ShortCircuitScalar(False), x=x)
        assert got == bool((xd < 0).any())
    src = k.c_source
    assert "if (p_2) {\n                break;\n            }" in src  # first thing in the loop over entries
    _, plain = run(has_negative, p=Scalar(False), x=x)
    assert "break" not in plain.c_source  # a Scalar never stops early


def test_short_circuit_is_a_tagged_trace_step():
    x = Tensor.from_numpy(np.array([0, 1.0, -2.0]), "sparse")
    _, k = run(has_negative, p=ShortCircuitScalar(False), x=x)
    tags = [n.tag for n in ir_walk(k.function.body) if isinstance(n, Tagged) and "ShortCircuit" in n.tag]
    assert tags
    _, lines = emit_c_with_provenance(k.function)
    src = emit_c_with_provenance(k.function)[0].splitlines()
    assert any("break;" in src[n - 1] for n in lines[tags[0]])
    steps = k.trace.find("lower:ShortCircuit")
    assert steps and tags[0] in steps[0].note and "isannihilator(or, p)" in steps[0].note


@loop_program
def sum_and_any(s, x, p=ShortCircuitScalar(False)):
    p[...] = False
    for i in _:
        p <<= any, x[i] < 0
        s += x[i]
    s += ifelse(p, 1000.0, 0.0)


def test_short_circuit_keeps_running_the_rest_of_the_loop():
    """After p is final the loop goes on without its reduction (the remainder), then breaks."""
    for xd in (np.array([0, -1.0, 0, 2.0, 5.0, -3.0, 0, 7.0]), np.array([1.0, 2.0, 0, 0])):
        for fmt in ("sparse", "dense"):
            x = Tensor.from_numpy(xd, fmt)
            got, k = run(sum_and_any, s=Scalar(0.0), x=x)
            assert got == pytest.approx(xd.sum() + 1000.0 * (xd < 0).any())
            body = k.c_source.split("if (p_2) {")[1].split("break;")[0]
            assert "s_2 += x_val" in body  # the remainder still sums


@loop_program
def first_negative_and_positive(s, x, p=ShortCircuitScalar(-1), q=ShortCircuitScalar(-1)):
    p[...] = -1
    q[...] = -1
    for i in _:
        if x[i] < 0:
            p <<= choose(-1), i
        if x[i] > 0:
            q <<= choose(-1), i
    s += p * 100 + q


@SETTINGS
@given(st.lists(st.sampled_from([0.0, 0.0, 1.0, -1.0]), max_size=12), st.sampled_from(["dense", "sparse"]))
def test_two_short_circuit_scalars_fire_at_different_times(xs, fmt):
    xd = np.array(xs, dtype=float)
    x = Tensor.from_numpy(xd, fmt)
    got, k = run(first_negative_and_positive, s=Scalar(0), x=x)
    neg, pos = np.flatnonzero(xd < 0), np.flatnonzero(xd > 0)
    assert got == (neg[0] if neg.size else -1) * 100 + (pos[0] if pos.size else -1)
    assert k.c_source.count("break;") >= 2


@loop_program
def row_any(y, A, p=ShortCircuitScalar(False)):
    for i in _:
        p[...] = False
        for j in _:
            p <<= any, A[i, j] < 0
        y[i] = p


def test_short_circuit_declared_per_row_breaks_only_the_inner_loop():
    Ad = np.array([[0, -1.0, 2.0], [1.0, 0, 0], [0, 0, 0], [-2.0, -3.0, 0]])
    A = Tensor.from_numpy(Ad, "csr")
    y, k = run(row_any, y=Dense(Element(False)), A=A)
    np.testing.assert_array_equal(y.to_numpy(), (Ad < 0).any(axis=1))
    # the row loop never breaks: p is declared again in each row
    assert k.c_source.count("break;") == 1


# --------------------------------------------------------------------------- errors


def line_of(e) -> int:
    return int(str(e.value).split()[1])


def first_line(fn) -> int:
    return fn.__code__.co_firstlineno


x3 = Tensor.from_numpy(np.array([0, 1.0, 2.0]), "sparse")


def test_short_circuit_needs_an_operator_with_an_annihilator():
    def k(s, x, p=ShortCircuitScalar(0.0)):
        for i in _:
            p += x[i]
        s += p
    with pytest.raises(ProgramError, match=r"ShortCircuitScalar p reduces with \+, which has no annihilator: "
                                           r"no value of p makes further `\+` reductions a no-op") as e:
        compile_program(loop_program(k), s=Scalar(0.0), x=x3)
    assert line_of(e) == first_line(k) + 2
    assert "p += x[i]" in str(e.value)


def test_short_circuit_refuses_overwrites_and_mixed_operators():
    def over(s, x, p=ShortCircuitScalar(0.0)):
        for i in _:
            p = x[i]
        s += p
    with pytest.raises(ProgramError, match="ShortCircuitScalar p is overwritten") as e:
        compile_program(loop_program(over), s=Scalar(0.0), x=x3)
    assert line_of(e) == first_line(over) + 2

    def mixed(s, x, p=ShortCircuitScalar(0.0)):
        for i in _:
            p <<= min, x[i]
            p <<= max, x[i]
        s += p
    with pytest.raises(ProgramError, match="reduces with max here but with min on line") as e:
        compile_program(loop_program(mixed), s=Scalar(0.0), x=x3)
    assert line_of(e) == first_line(mixed) + 3


def test_reading_a_sparse_scalar_before_declaring_it():
    def k(y, x, t=SparseScalar(0.0)):
        for i in _:
            y[i] = x[i] * t
    with pytest.raises(ProgramError, match=r"SparseScalar t is read before it is declared \(its dirty bit "
                                           r"does not exist yet\); declare it first") as e:
        compile_program(loop_program(k), y="dense", x=x3)
    assert line_of(e) == first_line(k) + 2


def test_reading_a_temporary_outside_the_block_that_declares_it():
    def k(s, x, t=Scalar(0.0)):
        for i in _:
            t[...] = 0.0
            t += x[i]
        s += t
    with pytest.raises(ProgramError, match=r"Scalar t is read before it is declared \(a temporary has no value "
                                           r"before it is declared\)") as e:
        compile_program(loop_program(k), s=Scalar(0.0), x=x3)
    assert line_of(e) == first_line(k) + 4


def test_sparse_scalar_is_declared_with_its_fill():
    def k(s, x, t=SparseScalar(0.0)):
        t[...] = 1.0
        for i in _:
            t += x[i]
        s += t
    with pytest.raises(ProgramError, match=r"SparseScalar t must be declared with its fill value: write "
                                           r"`t\[...\] = 0.0`") as e:
        compile_program(loop_program(k), s=Scalar(0.0), x=x3)
    assert line_of(e) == first_line(k) + 1


# --------------------------------------------------------------------------- differential (hypothesis)

LEVELS = [Dense, SparseList, SparseBand, SparseBlockList, RunList, SparseRunList, SparseByteMap, SparseHash,
          "coo"]
FILLS = [0.0, 1.0, 2.5, -1.0]


@st.composite
def vectors(draw, max_len=12):
    n = draw(st.integers(0, max_len))
    fill = draw(st.sampled_from(FILLS))
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))  # 0.0: every entry is the fill
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    vals = rng.choice([-2.0, -0.5, 0.0, 0.5, 1.0, 3.0], n)
    if draw(st.booleans()):  # runs of repeated values
        vals = np.repeat(vals[: (n + 2) // 3], 3)[:n]
    return np.where(rng.random(n) < density, vals, fill), fill


def as_tensor(v, fill, level):
    fmt = SparseCOO(1, Element(fill)) if level == "coo" else level(Element(fill))
    return Tensor.from_numpy(v, fmt)


# reduction -> (program, oracle expression, init: the identity, short-circuits)
@loop_program
def r_sum(s, x):
    for i in _:
        s += x[i]


@loop_program
def r_prod(s, x):
    for i in _:
        s *= x[i]


@loop_program
def r_min(s, x):
    for i in _:
        s <<= min, x[i]


@loop_program
def r_max(s, x):
    for i in _:
        s <<= max, x[i]


@loop_program
def r_any(s, x):
    for i in _:
        s <<= any, x[i] > 0.75


@loop_program
def r_all(s, x):
    for i in _:
        s <<= all, x[i] > -1.0


@loop_program
def r_choose(s, x):
    for i in _:
        s <<= choose(0.0), x[i]


REDUCTIONS = {
    "sum": (r_sum, "s[] = x[i]", 0.0),
    "prod": (r_prod, "s[] = prod[i](x[i])", 1.0),
    "min": (r_min, "s[] = min[i](x[i])", np.inf),
    "max": (r_max, "s[] = max[i](x[i])", -np.inf),
    "any": (r_any, "s[] = any[i](x[i] > 0.75)", False),
    "all": (r_all, "s[] = all[i](x[i] > -1.0)", True),
    "choose": (r_choose, "s[] = choose(0.0)[i](x[i])", 0.0),
}


@SETTINGS
@given(vectors(), st.sampled_from(LEVELS), st.sampled_from(sorted(REDUCTIONS)),
       st.sampled_from([Scalar, SparseScalar, ShortCircuitScalar]))
def test_reductions_into_each_scalar_kind_match_the_dense_oracle(vf, level, name, kind):
    v, fill = vf
    prog, expr, init = REDUCTIONS[name]
    if kind is ShortCircuitScalar and name == "sum":
        kind = Scalar  # + has no annihilator (an error, tested above)
    x = as_tensor(v, fill, level)
    ref, _ = evaluate(expr, x=v)
    for checked in (False, True):
        got, k = run(prog, checked=checked, s=kind(init), x=x)
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(ref, dtype=float), rtol=1e-12)
    assert ("break;" in k.c_source) == (kind is ShortCircuitScalar)


@loop_program
def short_rows(y, A, p=ShortCircuitScalar(0.0)):
    for i in _:
        p[...] = 0.0
        for j in _:
            p <<= choose(0.0), A[i, j]
        y[i] = p


@st.composite
def matrices(draw):
    rows = draw(st.integers(0, 5))
    v, fill = draw(vectors(max_len=30))
    n = len(v) // max(rows, 1)
    return v[: rows * n].reshape(rows, n), fill


@SETTINGS
@given(matrices(), st.sampled_from(LEVELS[:-1]))
def test_short_circuit_temporary_per_row_matches_the_oracle(mf, level):
    M, fill = mf
    A = Tensor.from_numpy(M, Dense(level(Element(fill))))
    ref, _ = evaluate("y[i] = choose(0.0)[j](A[i, j])", A=A)
    for checked in (False, True):
        y, _ = run(short_rows, checked=checked, y="dense", A=A)
        np.testing.assert_array_equal(y.to_numpy(), ref)


@SETTINGS
@given(vectors(), st.sampled_from(LEVELS), st.sampled_from(["dense", "sparse"]))
def test_sparse_scalar_reads_match_numpy(vf, level, out):
    v, fill = vf
    x = as_tensor(v, fill, level)
    t = v[v > 2].sum()
    for checked in (False, True):
        y, _ = run(sparse_read, checked=checked, y=out, x=x)
        np.testing.assert_allclose(y.to_numpy(), v * t)
