"""Two flattens into one index under the looplets strategy (``A.reshape(-1) + Z.reshape(-1)``): one
pair of loops walks both tensors, each read at that pair, and every call checks that their extents
agree pairwise, the kernel lowered for any shapes; each kernel against numpy, the dense oracle and
the IR interpreter."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import ShapeError
from compiler.reference import evaluate
from tests.compiler.looplets.shape_checks import one_kernel

nan, inf = np.nan, np.inf
ROWS = "collapse(A[i, j], (i, j) -> k) {op} collapse(Z[p, q], (p, q) -> k)"
FLATTENS = {
    "rows": ROWS,
    # (a CSC's flatten in its storage order, columns outside rows)
    "columns": "collapse(A[i, j], (j, i) -> k) {op} collapse(Z[p, q], (q, p) -> k)",
    # (Z read transposed: a CSC Z of shape 4 x 3 walked at A's rows and columns, Z.shape[1] = A.shape[0])
    "transposed": "collapse(A[i, j], (i, j) -> k) {op} collapse(Z[q, p], (p, q) -> k)",
}


def values(shape, fill, seed):
    """A matrix of ``shape`` holding its ``fill`` about half the time, else 2, -0.5, NaN, inf or -inf."""
    rng = np.random.default_rng(seed)
    picks = rng.choice([2.0, -0.5, nan, inf, -inf], shape)
    return np.where(rng.random(shape) < 0.5, picks, fill)


def tensor(a, fmt, fill):
    return ss.Tensor.from_numpy(a, fmt, fill=fill)


def oracle(prog, **tensors):
    with np.errstate(all="ignore"):
        return evaluate(prog, **tensors)


@pytest.mark.parametrize("flatten,op,fa,fz,fill,out", [
    ("rows", "+", "csr", "csr", 0.0, "dense"),
    ("rows", "*", "csr", "csr", nan, "sparse"),
    ("columns", "*", "csc", "csc", 0.0, "sparse"),
    ("rows", "+", "coo", "coo", inf, "dense"),
    ("rows", "*", "dense", "dense", 0.0, "dense"),
    ("rows", "+", "dense", "coo", nan, "sparse"),
    ("transposed", "*", "csr", "csc", 0.0, "sparse"),
    ("rows", "sum", "csr", "coo", 0.0, None),
])
def test_two_flattens_of_one_index_are_walked_by_one_pair_of_loops(flatten, op, fa, fz, fill, out):
    body = FLATTENS[flatten].format(op="*" if op == "sum" else op)
    prog = f"s[] = sum[k]({body})" if op == "sum" else f"c[k] = {body}"
    shape_z = (lambda r, c: (c, r)) if flatten == "transposed" else (lambda r, c: (r, c))
    a, z = values((3, 4), fill, 1), values(shape_z(3, 4), fill, 2)
    A, Z = tensor(a, fa, fill), tensor(z, fz, fill)
    _, oracle_fill = oracle(prog, A=A, Z=Z)
    formats = {} if out is None else {"c": ss.parse_format(out, ndim=1, fill=oracle_fill.item())}
    kernel = ss.lower(prog, "looplets", A=A, Z=Z, **formats)
    # (one walk of both: no conversion, no pass of each, no copy)
    assert not {"convert", "copy-scatter", "copy", "workspace"} & set(kernel.trace.stages()), kernel.trace.stages()
    assert any("both walked as one" in (s.note or "") for s in kernel.trace.steps)
    # the kernel serves any shapes: stored NaN and infinities, all at the fill, and an empty matrix
    for rows, cols, seeds in [(3, 4, (1, 2)), (3, 4, None), (0, 4, None), (2, 5, (3, 4))]:
        a = values((rows, cols), fill, seeds[0]) if seeds else np.full((rows, cols), fill)
        z = values(shape_z(rows, cols), fill, seeds[1]) if seeds else np.full(shape_z(rows, cols), fill)
        A, Z = tensor(a, fa, fill), tensor(z, fz, fill)
        zz = z.T if flatten == "transposed" else z
        order = "F" if flatten == "columns" else "C"
        x, y = a.reshape(-1, order=order), zz.reshape(-1, order=order)
        with np.errstate(all="ignore"):
            want = {"+": x + y, "*": x * y, "sum": np.sum(x * y)}[op]
            oracle_values, _ = oracle(prog, A=A, Z=Z)
            got, interpreted = kernel(A=A, Z=Z), kernel.interpret(A=A, Z=Z)
        got.validate()
        for result in (oracle_values, got.to_numpy(), interpreted.to_numpy()):
            np.testing.assert_array_equal(result, want)


def test_a_call_with_tensors_of_other_shapes_is_refused_naming_both():
    prog = "c[k] = " + ROWS.format(op="*")
    a, z = values((3, 4), 0.0, 5), values((3, 4), 0.0, 6)
    a[~np.isfinite(a)], z[~np.isfinite(z)] = 1.0, -1.0   # (finite: the point here is the shapes)
    A, Z = tensor(a, "csr", 0.0), tensor(z, "csr", 0.0)
    kernel = ss.lower(prog, "looplets", A=A, Z=Z, c="sparse")
    for _ in range(2):   # (the second call takes the fast path, which must not take other shapes unchecked)
        np.testing.assert_array_equal(kernel(A=A, Z=Z).to_numpy(), (a * z).reshape(-1))
    # (as many entries, 12, in another shape: the lattice strategy flattens them, these loops would read past Z's rows)
    message = ("k flattens A.shape[0] × A.shape[1] and Z.shape[0] × Z.shape[1] in one walk: the kernel's loops run "
               "over 3 × 4 and read both at each pair, so these extents must agree pairwise, but A has shape (3, 4) "
               "and Z (4, 3); lower with strategy='lattice' to flatten tensors of different shapes into one index")
    for call in (kernel, kernel.interpret):
        with pytest.raises(ShapeError, match=re.escape(message)):
            call(A=A, Z=tensor(z.reshape(4, 3), "csr", 0.0))
    # given those shapes, the lowering says so; the lattice strategy, which flattens each, computes it
    A, Z = tensor(a, "csr", 0.0), tensor(z.reshape(4, 3), "csr", 0.0)
    with pytest.raises(ShapeError, match=re.escape(message)):
        ss.lower(prog, "looplets", A=A, Z=Z)
    np.testing.assert_array_equal(ss.einsum(prog, A=A, Z=Z).to_numpy(), (a * z).reshape(-1))
    with pytest.raises(ShapeError, match=re.escape("run over 3 × 4 and read both at each pair, so these extents must "
                                                   "agree pairwise, but A has shape (3, 4) and Z (2, 6)")):
        kernel(A=a, Z=np.zeros((2, 6)))
    # (another count of entries is refused by the collapse's premise, as before)
    with pytest.raises(ShapeError, match=re.escape("|k| = |p|·|q| = 2·5 = 10, but k has extent 12")):
        kernel(A=a, Z=np.zeros((2, 5)))


def test_two_flattens_making_a_part_of_a_concat_are_walked_by_the_part_s_loops():
    prog = "d[l] = concat((" + ROWS.format(op="*") + ", b[m]), (k, m) -> l)"
    a, z, v = values((3, 4), 0.0, 9), values((3, 4), 0.0, 10), np.array([0, nan, 0, -inf])
    tensors = {"A": tensor(a, "csr", 0.0), "Z": tensor(z, "coo", 0.0), "b": tensor(v, "sparse", 0.0)}
    kernel = ss.lower(prog, "looplets", **tensors, d="sparse")
    assert "convert" not in kernel.trace.stages()
    with np.errstate(all="ignore"):
        want = np.concatenate([a.reshape(-1) * z.reshape(-1), v])
        for result in (oracle(prog, **tensors)[0], kernel(**tensors).to_numpy(),
                       kernel.interpret(**tensors).to_numpy()):
            np.testing.assert_array_equal(result, want)
    with pytest.raises(ShapeError, match=re.escape("but A has shape (3, 4) and Z (2, 6)")):
        kernel(**{**tensors, "Z": tensor(z.reshape(2, 6), "coo", 0.0)})


@pytest.mark.parametrize("fa,fz,fill", [("csr", "csr", nan), ("coo", "dense", 0.0)])
def test_the_array_front_end_adds_and_selects_two_ravels_in_one_kernel(fa, fz, fill):
    a, z = values((3, 4), fill, 7), values((3, 4), fill, 8)
    x = xp.asarray(tensor(a, fa, fill))
    y = xp.asarray(tensor(z, fz, fill))
    with np.errstate(all="ignore"):
        for expr, want in [(x.reshape(-1) + y.reshape(-1), a.reshape(-1) + z.reshape(-1)),
                           (xp.where(x.reshape(-1) > 0, y.reshape(-1), 0.0),
                            np.where(a.reshape(-1) > 0, z.reshape(-1), 0.0))]:
            kernel = one_kernel(expr)
            assert "convert" not in kernel.trace.stages()
            for got in (kernel(), kernel.interpret()):
                np.testing.assert_array_equal(got.to_numpy(), want)
    # ravels of other shapes: refused as one walk, saying why, and computed from each ravel (never read past
    # the second's rows)
    other = xp.asarray(tensor(z.reshape(4, 3), fz, fill))
    expr = x.reshape(-1) + other.reshape(-1)
    retry = ss.lower(expr, strategy="looplets").trace.steps[0]
    assert retry.stage == "retry" and re.search(r"but \w+ has shape \(3, 4\) and \w+ \(4, 3\)", retry.note)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets")), a.reshape(-1) + z.reshape(-1))


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 3), st.integers(1, 3)),
       fills=st.sampled_from([(0.0, 0.0), (nan, 0.0), (inf, 1.0)]),
       formats=st.sampled_from([("csr", "csr"), ("coo", "dense"), ("dense", "csr")]), op=st.sampled_from("+*"),
       seed=st.integers(0, 2 ** 16))
def test_two_flattens_against_numpy(shape, fills, formats, op, seed):
    a, z = values(shape, fills[0], seed), values(shape, fills[1], seed + 1)
    A, Z = tensor(a, formats[0], fills[0]), tensor(z, formats[1], fills[1])
    prog = "c[k] = " + ROWS.format(op=op)
    kernel = ss.lower(prog, "looplets", A=A, Z=Z)
    with np.errstate(all="ignore"):
        want = a.reshape(-1) + z.reshape(-1) if op == "+" else a.reshape(-1) * z.reshape(-1)
        np.testing.assert_array_equal(kernel(A=A, Z=Z).to_numpy(), want)
        np.testing.assert_array_equal(kernel.interpret(A=A, Z=Z).to_numpy(), want)
