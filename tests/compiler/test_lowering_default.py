"""lower() given no strategy on index notation without shape operators: the lattice's kernel, or
where the lattice refuses the statement the looplets', the trace's first step quoting the refusal
(``strategy='lattice'`` still raises it); given options that steer the lattice, its refusal. Against
the dense oracle (compiler.evaluate), NaN and ±inf stored. On main these statements raised the
lattice's StrategyError from lower() (einsum and the array front end retried by looplets themselves)."""

import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.format import Format
from compiler.levels import Dense, Element, SparseBand, SparseList
from compiler.reference import evaluate

nan, inf = np.nan, np.inf

#: statements the lattice refuses for these formats (a fill per format), and what it says (a reduction of
#: a reduction against the storage order, refused on main too, is the lattice's own kernel now: nested
#: workspaces, tests/compiler/lattice/test_nested_workspaces.py)
REFUSED = {
    "diagonal": ("y[i] = B[i, i, j]", {"B": (lambda f: "csf", (3, 3, 2))}, "repeats index i (a diagonal)"),
    "product-into-csf": ("C[j, k, i] = sum[l](A[i, j, l] * B[l, k])",
                         {"A": (lambda f: Format(Dense(Dense(SparseList(Element(f))))), (4, 2, 4)),
                          "B": (lambda f: Format(Dense(SparseBand(Element(f)))), (4, 2)), "C": (lambda f: "csf", None)},
                         "no loop order visits every tensor in storage order"),
}


def tensors_for(case, fill, density, seed):
    """The case's tensors (an output given as its format), entries drawn with NaN and ±inf among them."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, (fmt, shape) in REFUSED[case][1].items():
        f = fmt(fill)
        if shape is None:
            out[name] = f
            continue
        d = np.where(rng.random(shape) < density, rng.choice([2.0, -1.5, nan, inf, -inf], shape), fill)
        out[name] = ss.Tensor.from_numpy(d, f, fill=fill) if isinstance(f, str) else ss.Tensor.from_numpy(d, f)
    return out


def check(prog, tensors):
    """The default kernel of ``prog`` against the oracle; the kernel."""
    kernel = ss.lower(prog, **tensors)
    inputs = {k: v for k, v in tensors.items() if isinstance(v, ss.Tensor)}
    with np.errstate(invalid="ignore", over="ignore"):
        want = evaluate(prog, **inputs)[0]
    np.testing.assert_array_equal(np.asarray(kernel(**inputs).to_numpy()), want)
    return kernel


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_statement_the_lattice_refuses_is_lowered_by_looplets_the_refusal_quoted(case):
    prog, _, says = REFUSED[case]
    tensors = tensors_for(case, 0.0, 0.5, 3)
    with pytest.raises(ss.StrategyError, match=re.escape(says)) as refusal:
        ss.lower(prog, "lattice", **tensors)
    kernel = check(prog, tensors)
    first = kernel.trace.steps[0]
    assert kernel.strategy == "looplets" and first.stage == "strategy" and first.data == {"strategy": "looplets"}
    why = str(refusal.value).removesuffix("; lower it with strategy='looplets'")
    assert first.note == f"the lattice strategy refused this statement ({why}); lowered with looplets " \
                         f"(strategy='looplets')", first.note
    # einsum computes it too (it no longer retries by itself)
    inputs = {k: v for k, v in tensors.items() if isinstance(v, ss.Tensor)}
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal(ss.einsum(prog, **tensors).to_numpy(), evaluate(prog, **inputs)[0])


@settings(max_examples=8)
@given(case=st.sampled_from(sorted(REFUSED)), fill=st.sampled_from([0.0, 1.0, nan]),
       density=st.sampled_from([0.0, 0.4, 1.0]), seed=st.integers(0, 2 ** 16))
@example(case="product-into-csf", fill=1.0, density=0.4, seed=0)
@example(case="diagonal", fill=nan, density=1.0, seed=1)
def test_the_default_kernel_of_a_refused_statement_computes_the_oracle(case, fill, density, seed):
    """Any fill, all-fill (density 0) and dense inputs; a kernel lowered for finite values is lowered
    again for NaN, the same way (looplets)."""
    check(REFUSED[case][0], tensors_for(case, fill, density, seed))


def test_options_steer_the_lattice_so_its_refusal_is_raised():
    """Given a loop order (or a schedule), no strategy means the lattice's: it refuses as strategy='lattice'."""
    tensors = tensors_for("diagonal", 0.0, 0.5, 0)
    with pytest.raises(ss.StrategyError) as explicit:
        ss.lower("y[i] = B[i, i, j]", "lattice", options={"order": ["i", "j"]}, **tensors)
    trace = ss.Trace()
    with pytest.raises(ss.StrategyError) as default:
        ss.lower("y[i] = B[i, i, j]", trace=trace, options={"order": ["i", "j"]}, **tensors)
    assert str(default.value) == str(explicit.value)
    assert default.value.trace is trace and trace.stages()[0] == "parse"   # (where the lattice stopped)
    # name= is every strategy's option
    kernel = ss.lower("y[i] = B[i, i, j]", options={"name": "diag"}, **tensors)
    assert kernel.strategy == "looplets" and "diag(" in kernel.c_source


@pytest.mark.parametrize("prog, tensors, lattice, looplets", [
    ("y[i] = y[i] + A[i, j] * x[j]", {"A": "csr", "x": "dense", "y": "dense"},
     "output y is also read on the right-hand side", "y is read and written in the same statement"),
    ("A[i, k] = B[i, j]", {"B": "csr"}, "output index k of A[i, k] is used by no input",
     "cannot infer the extent of loop index k"),
])
def test_a_statement_both_strategies_refuse_gets_both_reasons_the_lattices_first(prog, tensors, lattice, looplets):
    with pytest.raises(ss.StrategyError) as e:
        ss.lower(prog, **tensors)
    text = str(e.value)
    assert text.startswith(lattice) and "; the looplets strategy refused it too: " in text and looplets in text, text
    assert text.index(lattice) < text.index(looplets)


def test_the_default_kernel_of_a_statement_the_lattice_lowers_is_the_lattices():
    """The same C and trace as strategy='lattice' (no strategy step), but its own kernel: it lowers
    again by looplets where the lattice refuses, which the explicit kernel must not."""
    A = ss.Tensor.from_numpy(np.array([[0.0, nan], [inf, 2.0]]), "csr")
    x = np.array([1.0, -inf])
    default, explicit = ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x), ss.lower("y[i] = A[i, j] * x[j]", "lattice", A=A, x=x)
    assert default.strategy == explicit.strategy == "lattice"
    assert default.c_source == explicit.c_source and default.trace.stages() == explicit.trace.stages()
    assert "strategy" not in default.trace.stages()
    assert default is not explicit and default.falls_back and not getattr(explicit, "falls_back", False)
    assert ss.lower("y[i] = A[i, j] * x[j]", A=A, x=x) is default     # (cached)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(default(A=A, x=x).to_numpy(), evaluate("y[i] = A[i, j] * x[j]", A=A, x=x)[0])


def test_a_reduction_without_identity_is_refused_by_both_not_started_at_zero():
    """Looplets started ``y[i] = maxu[j](A[i, j])`` at 0 (a row of stored negatives had the max 0, the
    oracle's is -2): now they refuse it as the lattice does, so the default computes no wrong kernel."""
    maxu = ss.user_function("maxu", max, "return x > y ? x : y;", idempotent=True, commutative=True,
                            associative=True)
    A = ss.Tensor.from_numpy(np.array([[-3.0, 0.0, -1.0], [-5.0, -2.0, -inf]]), "csr")
    for strategy in ("looplets", None):
        with pytest.raises(ss.StrategyError, match=r"maxu has none; declare one"):
            ss.lower("y[i] = maxu[j](A[i, j])", strategy, functions={"maxu": maxu}, A=A)
    assert evaluate("y[i] = maxu[j](A[i, j])", functions={"maxu": maxu}, A=A)[0].tolist() == [0.0, -2.0]


@pytest.mark.parametrize("c_body, says", [
    ("return x * x", r"the C body of user function sq\w* does not compile"),        # (no semicolon)
    ("return x + x;", r"user function sq\w*: its C body gives 2.0 at \(x=1.0\) \(float64\), its py gives 1.0"),
])
def test_a_user_error_of_the_looplets_is_raised_as_itself_not_as_both_strategies_refusal(c_body, says):
    """The lattice refuses the diagonal on strategy grounds; looplets lower it but reject the user's C body.
    On main the default folded that UserCodeError into a StrategyError "the looplets strategy refused it
    too", as if no strategy could lower the statement: the user's error is theirs to fix, and named so."""
    name = "sq_nc" if "*" in c_body else "sq_py"     # (a function's C body is checked once per name)
    sq = ss.user_function(name, lambda x: x * x, c_body, arity=1)
    B = tensors_for("diagonal", 0.0, 0.5, 5)["B"]
    prog = f"y[i] = {name}(B[i, i, j])"
    with pytest.raises(ss.StrategyError, match="repeats index i"):
        ss.lower(prog, "lattice", functions={name: sq}, B=B)
    with pytest.raises(ss.UserCodeError, match=says) as explicit:
        ss.lower(prog, "looplets", functions={name: sq}, B=B)
    with pytest.raises(ss.UserCodeError, match=says) as default:
        ss.lower(prog, functions={name: sq}, B=B)
    assert not isinstance(default.value, ss.StrategyError) and "refused" not in str(default.value)
    assert str(default.value) == str(explicit.value)
    # (the same function with a right body: the default kernel is the looplets', against the oracle)
    good = ss.user_function(name + "_ok", lambda x: x * x, "return x * x;", arity=1)
    kernel = ss.lower(f"y[i] = {name}_ok(B[i, i, j])", functions={name + "_ok": good}, B=B)
    assert kernel.strategy == "looplets"
    np.testing.assert_array_equal(kernel(B=B).to_numpy(),
                                  evaluate(f"y[i] = {name}_ok(B[i, i, j])", functions={name + "_ok": good}, B=B)[0])
