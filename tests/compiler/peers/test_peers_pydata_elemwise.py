"""pydata/sparse's elementwise and broadcasting tests (sparse/numba_backend/tests/test_elemwise.py:
test_elemwise, test_elemwise_binary, test_elemwise_trinary, test_binary_broadcasting,
test_trinary_broadcasting, test_trinary_broadcasting_pathological), as sparsescope's own cases.

pydata/sparse applies numpy functions to COO (and GCXS, DOK) arrays and broadcasts shapes as
numpy does. Here each function is index notation: broadcasting is an operand that omits the
output's index of a missing or size-1 axis (``C[i, j, k] = x[i, k] + y[i, j, k]`` for shapes
(3, 1, 4) and (3, 2, 4)). Inputs are COO (SparseCOO), GCXS (CSR / CSF) or DOK (SparseHash), with
values of our own from fixed seeds; every case runs under both strategies into a COO output and is
compared with :func:`compiler.evaluate` and numpy.
"""

import itertools

import numpy as np
import pytest

import compiler as ss
from compiler.testing import random_sparse
from peer_support import STRATEGIES, as_tensor, check, check_refused

LETTERS = "ijkl"


def _format(kind: str, ndim: int) -> ss.Format:
    """pydata/sparse's formats as this project's: COO, GCXS (compressed: a sparse list per row, or
    CSF), DOK (a hash)."""
    if kind == "coo":
        return ss.parse_format("coo", ndim=ndim)
    if kind == "gcxs":
        return ss.parse_format({1: "sparse", 2: "csr"}.get(ndim, "csf"), ndim=ndim)
    spec = "Element(0.0)"
    for _ in range(ndim):
        spec = f"SparseHash({spec})"
    return ss.parse_format(spec)


def _data(shape, seed, density=0.5):
    return random_sparse(shape, density, np.random.default_rng(seed), lo=-5, hi=6)


def _operand(name, shape, out_ndim):
    """``name`` indexed as numpy broadcasts ``shape`` against an output of ``out_ndim`` axes: aligned
    right, size-1 axes dropped. Returns (access text, squeezed shape axes kept)."""
    offset = out_ndim - len(shape)
    kept = [a for a, n in enumerate(shape) if n != 1]
    return f"{name}[{', '.join(LETTERS[offset + a] for a in kept)}]" if kept else None, kept


def _program(expr_template, shapes):
    """The index notation of ``expr_template`` (``"{x} + {y}"``) over operands of ``shapes``, and the
    operands' data squeezed to what they index."""
    out_shape = np.broadcast_shapes(*shapes)
    names = "xyz"[:len(shapes)]
    accesses, squeeze = {}, {}
    for n, shape in zip(names, shapes):
        text, kept = _operand(n, shape, len(out_shape))
        accesses[n], squeeze[n] = text, kept
    out = f"C[{', '.join(LETTERS[:len(out_shape)])}]"
    return f"{out} = {expr_template.format(**accesses)}", out_shape, squeeze


def run(strategy, template, arrays, kinds, func):
    """``template`` of the operands ``arrays`` (numpy, in pydata's shapes), the operands stored in
    ``kinds``, into a COO output; checked against numpy's ``func`` of the arrays and evaluate."""
    program, out_shape, squeeze = _program(template, [a.shape for a in arrays])
    read = {len(out_shape) - a.ndim + k for n, a in zip("xyz", arrays) for k in squeeze[n]}
    tensors = {}
    for n, a, kind in zip("xyz", arrays, kinds):
        sq = a.reshape([a.shape[k] for k in squeeze[n]])
        tensors[n] = as_tensor(sq, _format(kind, sq.ndim), n)
    unread = [LETTERS[a] for a in range(len(out_shape)) if a not in read]
    if unread:
        # an axis every operand has as size 1: index notation has no operand to take its extent from
        said = {"lattice": rf"output index {unread[0]} of C\[.*\] is used by no input, so its extent is unknown",
                "looplets": rf"cannot infer the extent of loop index {unread[0]}: no tensor is indexed by it alone"}
        check_refused(strategy, program, said[strategy], **tensors)
        return None
    with np.errstate(all="ignore"):
        expected = np.asarray(func(*arrays))
        fill = ss.evaluate(program, **tensors)[1]
    out = ss.parse_format("coo", ndim=len(out_shape), fill=np.asarray(fill).item(), dtype=expected.dtype.name)
    return check(strategy, program, expected, out=out, **tensors)


# ------------------------------------------------------------------------------- test_elemwise

def _unary(name, py, body):
    return ss.user_function(name, py, body, arity=1)


UNARY = {  # numpy's functions as user functions where the project has no builtin
    "expm1": _unary("expm1", np.expm1, "return expm1(x);"), "log1p": _unary("log1p", np.log1p, "return log1p(x);"),
    "sin": _unary("sin", np.sin, "return sin(x);"), "tan": _unary("tan", np.tan, "return tan(x);"),
    "sinh": _unary("sinh", np.sinh, "return sinh(x);"), "tanh": _unary("tanh", np.tanh, "return tanh(x);"),
    "floor": _unary("floor", np.floor, "return floor(x);"), "ceil": _unary("ceil", np.ceil, "return ceil(x);"),
    "rint": _unary("rint", np.rint, "return nearbyint(x);"),
}
UNARY_CASES = [(f"{n}(A[i, j])", getattr(np, n), UNARY) for n in UNARY] + [
    ("sqrt(abs(A[i, j]))", lambda a: np.sqrt(np.abs(a)), None), ("abs(A[i, j])", np.abs, None),
    ("-A[i, j]", np.negative, None), ("exp(A[i, j])", np.exp, None)]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", ["coo", "gcxs", "dok"])
@pytest.mark.parametrize("program, func, functions", UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_pydata_elemwise_unary(strategy, kind, program, func, functions):
    a = _data((4, 5), 1) / 2
    A = as_tensor(a, _format(kind, 2), "A")
    with np.errstate(all="ignore"):
        expected = func(a)
        fill = ss.evaluate(f"C[i, j] = {program}", functions=functions, A=A)[1]
    out = ss.parse_format("coo", ndim=2, fill=float(fill))
    check(strategy, f"C[i, j] = {program}", expected, out=out, functions=functions, A=A)


# ------------------------------------------------------------------------ binary and trinary

BINARY = [("{x} * {y}", np.multiply), ("{x} + {y}", np.add), ("{x} - {y}", np.subtract),
          ("{x} > {y}", np.greater), ("{x} < {y}", np.less), ("{x} != {y}", np.not_equal)]
SHAPES = [(2,), (2, 3), (2, 3, 4)]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kind", ["coo", "gcxs"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("template, func", BINARY, ids=[b[0] for b in BINARY])
def test_pydata_elemwise_binary(strategy, kind, shape, template, func):
    run(strategy, template, [_data(shape, 2), _data(shape, 3)], [kind, kind], func)


TRINARY = [("{x} + {y} + {z}", lambda x, y, z: x + y + z), ("{x} * {y} * {z}", lambda x, y, z: x * y * z),
           ("{x} + {y} * {z}", lambda x, y, z: x + y * z), ("({x} + {y}) * {z}", lambda x, y, z: (x + y) * z)]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("kinds", [("coo", "coo", "coo"), ("coo", "gcxs", "gcxs")],
                         ids=lambda k: "-".join(k))
@pytest.mark.parametrize("shape", SHAPES[1:], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("template, func", TRINARY, ids=[t[0] for t in TRINARY])
def test_pydata_elemwise_trinary(strategy, kinds, shape, template, func):
    run(strategy, template, [_data(shape, 4), _data(shape, 5), _data(shape, 6)], kinds, func)


# ----------------------------------------------------------------------------- broadcasting

BROADCAST_PAIRS = [((2, 3, 4), (3, 4)), ((3, 4), (2, 3, 4)), ((3, 1, 4), (3, 2, 4)), ((1, 3, 4), (3, 4)),
                   ((3, 4, 1), (3, 4, 2)), ((1, 5), (5, 1)), ((3, 1), (3, 4)), ((3, 1), (1, 4)), ((1, 4), (3, 4))]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=lambda p: "+".join("x".join(map(str, s)) for s in p))
@pytest.mark.parametrize("template, func", BINARY[:2], ids=["mul", "add"])
def test_pydata_binary_broadcasting(strategy, shapes, template, func):
    """test_binary_broadcasting; pydata also asserts that the result stores no explicit zero."""
    arrays = [_data(s, 7 + n) for n, s in enumerate(shapes)]
    got = run(strategy, template, arrays, ["coo", "coo"], func)
    assert got is None or np.count_nonzero(got) == np.count_nonzero(func(*arrays))


TRINARY_SHAPES = [[(2,), (3, 2), (4, 3, 2)], [(3,), (2, 3), (2, 2, 3)], [(2,), (2, 2), (2, 2, 2)],
                  [(1, 1, 2), (1, 3, 1), (4, 1, 1)], [(2,), (2, 1), (2, 1, 1)]]
# three of pydata's six functions (the rest repeat these shapes of expression; kernels compile)
TRINARY_BROADCAST = [("{x} * ({y} + {z})", lambda x, y, z: x * (y + z)), TRINARY[1],
                     ("{x} + {y} - {z}", lambda x, y, z: x + y - z)]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("shapes", TRINARY_SHAPES, ids=lambda p: "+".join("x".join(map(str, s)) for s in p))
@pytest.mark.parametrize("template, func", TRINARY_BROADCAST, ids=[t[0] for t in TRINARY_BROADCAST])
def test_pydata_trinary_broadcasting(strategy, shapes, template, func):
    run(strategy, template, [_data(s, 11 + n) for n, s in enumerate(shapes)], ["coo"] * 3, func)


# ---------------------------------------------------------------- pathological broadcasting

def _pathological(shape, seed, value, fraction):
    """pydata's random_value_array: about ``fraction`` of the stored values are ``value``; the
    positions come from a fixed seed, so the case is the same on every run."""
    a = _data(shape, seed)
    rng = np.random.default_rng(seed + 100)
    stored = np.flatnonzero(a)
    hit = stored[rng.random(len(stored)) < fraction]
    a.flat[hit] = value
    return a


PATHOLOGICAL = [([(2,), (3, 2), (4, 3, 2)], "({x} + {y}) * {z}", lambda x, y, z: (x + y) * z),
                ([(3,), (2, 3), (2, 2, 3)], "{x} * ({y} + {z})", lambda x, y, z: x * (y + z)),
                ([(2,), (2, 2), (2, 2, 2)], "{x} * {y} * {z}", lambda x, y, z: x * y * z),
                ([(4,), (4, 4), (4, 4, 4)], "{x} + {y} + {z}", lambda x, y, z: x + y + z)]


def _pathological_cases():
    # (each value stored in half the entries, and NaN in all of them: the suite's time, 48 -> 32 cases;
    # an operand all ±inf was a fifth of this file's time and meets the same sparse paths as half)
    cases = [(value, 0.5) for value in (np.nan, np.inf, -np.inf)] + [(np.nan, 1.0)]
    for (shapes, template, func), (value, fraction) in itertools.product(PATHOLOGICAL, cases):
        # (issue 28 item 3: a stored NaN or inf times the other operand's fill 0 is NaN, not 0)
        yield pytest.param(shapes, template, func, value, fraction,
                           id=f"{template}-{value}-{fraction}")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("shapes, template, func, value, fraction", list(_pathological_cases()))
def test_pydata_trinary_broadcasting_pathological(strategy, shapes, template, func, value, fraction):
    arrays = [_pathological(s, 21 + n, value, fraction) for n, s in enumerate(shapes)]
    run(strategy, template, arrays, ["coo"] * 3, func)
