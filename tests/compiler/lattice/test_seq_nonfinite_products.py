"""Products whose factors store inf, -inf or NaN beside another factor's fill, by the sequence CFIR's interpreter
(compiler.lattice.seqinterp, :func:`~compiler.lattice.seqderive.seq_evaluate`), against numpy and the dense oracle.

A sequence CFIR built outside ``values.assuming`` (``seq_lower`` given the tensors alone) assumes their stored
values finite, as TACO does: ``A[l] * B[l, i]`` intersects A with B, skipping where B stores nothing. Run on an
``A`` storing inf there, the interpreter answered the fill (0) where numpy answers NaN (inf * 0). Now it refuses
values its CFIR was not built for, naming the tensor, as the CFIR interpreter does
(tests/compiler/lattice/test_cfir_nonfinite_products.py); ``seq_evaluate`` builds the CFIR for what the tensors
hold, as ``lower()`` does, and agrees with numpy.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import UsageError, evaluate
from compiler.lattice.seqderive import seq_evaluate, seq_lower
from compiler.lattice.seqinterp import interpret
from tests.compiler.lattice.test_cfir_nonfinite_products import FOUND, PRODUCT, VALUES, stored

nan, inf = np.nan, np.inf
ELEMENTWISE = "y[i] = A[i] * B[i]"
#: each program's loops (the sum's outside the output's: B's rows walked as stored) and its numpy form
PROGRAMS = {PRODUCT: (("l", "i"), lambda a, b: (a[:, None] * b).sum(axis=0)),
            ELEMENTWISE: (None, lambda a, b: a * b)}


def finite_built(program, **tensors):
    """What the sequence interpreter makes of ``program`` lowered for finite values (outside values.assuming)."""
    low = seq_lower(program, hoisted=PROGRAMS[program][0], **tensors)
    out = np.full(low.shape, 0.0 if low.fill is None else low.fill)
    for key, v in interpret(low.cfir, low.data).outputs.get("y", {}).items():
        out[key] = v
    return out


def check(program, **tensors):
    """``program`` by seq_evaluate against numpy and the oracle; by the finite-built CFIR where the tensors are
    finite, else refused, naming a tensor that is not."""
    with np.errstate(invalid="ignore"):
        want = PROGRAMS[program][1](*(tensors[n].to_numpy() for n in "AB"))
        np.testing.assert_array_equal(evaluate(program, **tensors)[0], want)
        np.testing.assert_array_equal(seq_evaluate(program, hoisted=PROGRAMS[program][0], **tensors), want)
        wild = [n for n, t in tensors.items() if not t.value_facts.finite]
        if not wild:
            np.testing.assert_array_equal(finite_built(program, **tensors), want)
            return
        with pytest.raises(UsageError, match=f"({'|'.join(wild)}) may hold .* but the sequence CFIR was built "
                                             f"assuming (\\1) finite"):
            finite_built(program, **tensors)


def test_inf_times_an_absent_0_is_refused_by_a_finite_built_cfir():
    tensors = {name: stored(*spec) for name, spec in FOUND.items()}
    # (A's inf at l = 0 where B's row stores nothing: y[0] is inf * 0, NaN; on main the finite-built CFIR
    # skipped it, answering 0)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(seq_evaluate(PRODUCT, hoisted=("l", "i"), **tensors), [nan, inf])
    with pytest.raises(UsageError, match=r"A may hold \+inf, but the sequence CFIR was built assuming A finite"):
        finite_built(PRODUCT, **tensors)
    check(PRODUCT, **tensors)
    # (... and it serves finite values as before)
    check(PRODUCT, A=stored([3.0], [True], "sparse_vector", 0.0), B=tensors["B"])


def test_a_tensor_read_twice_is_named_as_given():
    # (a read twice, its second read under a primed name, a'; its NaN beside b's absent 0)
    a, b = stored([nan, 2.0], [True, True], "sparse_vector", 0.0), stored([1.0, 0.0], [False, True], "coo", 0.0)
    low = seq_lower("y[i] = a[i] * b[i] + a[i] * b[i] * 2.0", a=a, b=b)
    assert "a'" in low.data, low.data.keys()
    with pytest.raises(UsageError, match=r"^a may hold NaN, but the sequence CFIR was built assuming a finite"):
        interpret(low.cfir, low.data)
    np.testing.assert_array_equal(seq_evaluate("y[i] = a[i] * b[i] + a[i] * b[i] * 2.0", a=a, b=b), [nan, 0.0])


@st.composite
def operands(draw):
    """A program of :data:`PROGRAMS` and its A and B: each of a drawn format and fill (0, 1, NaN), extents up to
    3, each entry stored or not, stored values from ``VALUES`` (empty, all-fill and all-stored among them)."""
    program = draw(st.sampled_from(sorted(PROGRAMS)))
    n, m = draw(st.integers(0, 3)), draw(st.integers(1, 3))

    def tensor(shape, formats):
        size = int(np.prod(shape))
        vals = draw(st.lists(st.sampled_from(VALUES), min_size=size, max_size=size))
        mask = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        return stored(np.reshape(vals, shape), np.reshape(mask, shape).astype(bool), draw(st.sampled_from(formats)),
                      draw(st.sampled_from([0.0, 1.0, nan])))

    vector = ["dense", "sparse_vector", "coo"]
    B = tensor((n, m), ["dense", "csr", "coo", "dcsr"]) if program == PRODUCT else tensor((n,), vector)
    return program, {"A": tensor((n,), vector), "B": B}


@settings(max_examples=12, deadline=None)
@given(operands())
@example((PRODUCT, {name: stored(*spec) for name, spec in FOUND.items()}))
@example((ELEMENTWISE, {"A": stored([-inf, 2.0], [True, False], "coo", 1.0),
                        "B": stored([0.0, nan], [False, True], "sparse_vector", 0.0)}))
@example((ELEMENTWISE, {"A": stored([0.0, 0.0], [False, False], "sparse_vector", nan),
                        "B": stored([1.0, 2.0], [True, True], "dense", 0.0)}))
def test_products_of_non_finite_values_by_property(drawn):
    program, tensors = drawn
    check(program, **tensors)
