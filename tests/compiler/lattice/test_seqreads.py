"""An access read twice in a shape-operator statement under the lattice strategy
(compiler/lattice/seqreads.py). Both reads walked one cursor, and an intersection beside a union
moved it past entries the union still had to visit: ``concat((a[i] + a[i] * b[i], c[j]), ..)`` gave
0 where a stores a value and b none, as did ``collapse(A + A * B)`` and ``collapse(A * B + A * C)``
(wrong values on main, found by a helper probing the lattice). Each read after the first now walks
its own cursors. Against numpy, the dense oracle, the IR interpreter and the CFIR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler.lattice.seqderive import seq_evaluate
from compiler.reference import evaluate

VECTORS = {
    "concat": ("y[l] = concat((a[i] + a[i] * b[i], c[j]), (i, j) -> l)", lambda a, b, c: np.concatenate([a + a * b, c])),
    "concat2": ("y[l] = concat((a[i] * b[i] + a[i] * c[i], c[j]), (i, j) -> l)",
                lambda a, b, c: np.concatenate([a * b + a * c, c])),
    "slice": ("y[k] = slice(a[i] + a[i] * b[i], i -> k, (1, 11, 2))", lambda a, b, c: (a + a * b)[1:11:2]),
    "backwards": ("y[k] = slice(a[i] - a[i] * c[i], i -> k, (11, -1, -3))", lambda a, b, c: (a - a * c)[11::-3]),
    "split": ("Y[i, j] = split(a[k] + a[k] * b[k], k -> (i, j:4))", lambda a, b, c: (a + a * b).reshape(3, 4)),
}
MATRICES = {
    "absorbed": ("c[m] = collapse(A[i, j] + A[i, j] * B[i, j], (i, j) -> m)", lambda A, B, C: (A + A * B).ravel()),
    "two terms": ("c[m] = collapse(A[i, j] * B[i, j] + A[i, j] * C[i, j], (i, j) -> m)",
                  lambda A, B, C: (A * B + A * C).ravel()),
    "reshaped": ("y[i, j] = split(collapse(A[k, l] * B[k, l] + A[k, l] * C[k, l], (k, l) -> m), m -> (i, j:6))",
                 lambda A, B, C: (A * B + A * C).reshape(2, 6)),
}


def _operands(shape, fmts, fill, seed, wild):
    rng = np.random.default_rng(seed)
    values = [1.0, -2.0, 3.5] + ([np.nan, np.inf, -np.inf] if wild else [])
    arrays = [np.where(rng.random(shape) < 0.6, rng.choice(values, shape), fill) for _ in range(3)]
    return arrays, [ss.Tensor.from_numpy(x, f, fill=fill) for x, f in zip(arrays, fmts)]


def _check(program, want, names, tensors):
    given_ = dict(zip(names, tensors))
    kernel = ss.lower(program, "lattice", **given_)
    got = kernel(**given_)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(evaluate(program, **given_)[0], want)
    np.testing.assert_array_equal(kernel.interpret(**given_).to_numpy(), want)
    np.testing.assert_array_equal(seq_evaluate(program, **given_), want)
    return kernel


@pytest.mark.parametrize("case", sorted(VECTORS))
def test_an_access_read_twice_beside_an_intersection_keeps_its_entries(case):
    program, want = VECTORS[case]
    arrays, tensors = _operands(12, ("sparse", "sparse", "sparse"), 0.0, 5, wild=False)
    kernel = _check(program, want(*arrays), "abc", tensors)
    # (the second read of a walks cursors of its own)
    assert "a'" in str(next(s.after for s in kernel.trace.steps if s.stage == "seq-derive"))


@pytest.mark.parametrize("case", sorted(MATRICES))
def test_a_collapse_of_terms_reading_one_matrix_twice(case):
    program, want = MATRICES[case]
    arrays, tensors = _operands((3, 4), ("csr", "coo", "csr"), 0.0, 3, wild=False)
    _check(program, want(*arrays), "ABC", tensors)


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=st.sampled_from(sorted(VECTORS) + sorted(MATRICES)), fill=st.sampled_from([0.0, 1.0, np.nan]),
       fmt=st.sampled_from(["sparse", "dense"]), wild=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(case="concat", fill=0.0, fmt="sparse", wild=False, seed=5)        # wrong on main
@example(case="two terms", fill=0.0, fmt="sparse", wild=True, seed=1)
@example(case="absorbed", fill=np.nan, fmt="sparse", wild=True, seed=2)
def test_repeated_reads_against_numpy(case, fill, fmt, wild, seed):
    vector = case in VECTORS
    program, want = (VECTORS if vector else MATRICES)[case]
    fmts = (fmt,) * 3 if vector else (("csr", "coo", "csr") if fmt == "sparse" else ("dense",) * 3)
    arrays, tensors = _operands(12 if vector else (3, 4), fmts, fill, seed, wild)
    with np.errstate(invalid="ignore"):
        expected = want(*arrays)
    _check(program, expected, "abc" if vector else "ABC", tensors)
