"""A concatenation of ravels and vectors under the looplets strategy (issue 30 item 4), 2-D and 3-D ravels alike:
``concat((collapse(A[k, l], (k, l) -> j), B[m]), (j, m) -> i)`` is a loop nest per part, the
collapse's two loops writing ``l + k·|l|`` over ``[0, |k|·|l|)`` and the vector's one loop
``m + |k|·|l|`` after it. A sparse vector output is appended in order: the append-order check
proves each later nest's coordinates start where the earlier's end, their nests however deep. It
was refused ('walk one fiber of its SparseList level by different loop nests'), and the array
front end materialized the ravel and the concat. So too given an extent-1 axis: a CSR's rows, each nest's spanning
its part's, or a COO's entries, compared at the first mode they write apart. Against numpy, the dense oracle and
the IR interpreter; a write not provably after the earlier one is still refused."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler import array as xp
from compiler.looplets import ProgramError, compile_program, loop_program
from tests.compiler.looplets.shape_checks import checked_kernel, one_kernel

FILLS = (0.0, 1.0, np.nan, np.inf, -np.inf)
FORMS = {
    "ravel, vector": "out[i] = concat((collapse(A[k, l], (k, l) -> j), B[m]), (j, m) -> i)",
    "vector, ravel": "out[i] = concat((B[m], collapse(A[k, l], (k, l) -> j)), (m, j) -> i)",
    "ravel, ravel": "out[i] = concat((collapse(A[k, l], (k, l) -> j), collapse(C[p, q], (p, q) -> m)), (j, m) -> i)",
    "ravel, vector, ravel": ("out[i] = concat((concat((collapse(A[k, l], (k, l) -> j), B[m]), (j, m) -> n), "
                             "collapse(C[p, q], (p, q) -> r)), (n, r) -> i)"),
    # (a 3-D tensor's ravel, a collapse of a collapse: a loop for each of its three indices; refused before)
    "ravel3, vector": ("out[i] = concat((collapse(collapse(T[k, l, p], (k, l) -> s), (s, p) -> j), B[m]), "
                       "(j, m) -> i)"),
    "ravel, ravel3": ("out[i] = concat((collapse(A[k, l], (k, l) -> j), "
                      "collapse(collapse(T[p, q, r], (p, q) -> s), (s, r) -> m)), (j, m) -> i)"),
}


def data(shape, fill, rng):
    """Entries 1, -2, NaN or ±inf stored among ``fill``."""
    return np.where(rng.random(shape) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf, -np.inf], shape), fill)


def want_of(form, a, b, c, t):
    parts = {"ravel": [a.ravel(), c.ravel()], "vector": [b], "ravel3": [t.ravel()]}
    return np.concatenate([parts[p].pop(0) for p in form.split(", ")])


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(form=st.sampled_from(sorted(FORMS)), shapes=st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 5)),
       fmts=st.tuples(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["sparse", "dense"]),
                      st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csf", "coo", "dense"])),
       fill=st.sampled_from(FILLS), out=st.sampled_from(["sparse_vector", "dense"]), seed=st.integers(0, 2 ** 16))
@example(form="ravel, vector", shapes=(6, 8, 10), fmts=("csr", "sparse", "csr", "csf"), fill=0.0, out="sparse_vector",
         seed=0)    # refused before
@example(form="ravel, vector", shapes=(3, 4, 5), fmts=("coo", "sparse", "dense", "csf"), fill=np.nan,
         out="sparse_vector", seed=1)    # refused before
@example(form="vector, ravel", shapes=(2, 3, 4), fmts=("csr", "dense", "coo", "csf"), fill=-np.inf,
         out="sparse_vector", seed=2)    # refused before
@example(form="ravel, ravel", shapes=(3, 2, 0), fmts=("coo", "sparse", "csr", "csf"), fill=1.0,
         out="sparse_vector", seed=3)
@example(form="ravel, vector, ravel", shapes=(0, 3, 4), fmts=("csr", "sparse", "coo", "csf"), fill=np.inf,
         out="sparse_vector", seed=4)    # an empty ravel; refused before
@example(form="ravel, vector", shapes=(2, 2, 3), fmts=("dense", "sparse", "csr", "csf"), fill=0.0, out="dense",
         seed=5)
@example(form="ravel3, vector", shapes=(2, 3, 4), fmts=("csr", "sparse", "csr", "csf"), fill=0.0, out="sparse_vector",
         seed=6)    # refused before
@example(form="ravel, ravel3", shapes=(3, 2, 2), fmts=("coo", "sparse", "csr", "coo"), fill=np.nan,
         out="sparse_vector", seed=7)    # refused before
@example(form="ravel, ravel3", shapes=(0, 2, 2), fmts=("csr", "sparse", "csr", "dense"), fill=1.0, out="dense", seed=8)
def test_a_concatenation_of_ravels_and_vectors(form, shapes, fmts, fill, out, seed):
    rng = np.random.default_rng(seed)
    rows, cols, n = shapes
    a, b, c = data((rows, cols), fill, rng), data(n, fill, rng), data((cols, rows + 1), fill, rng)
    t = data((cols, 2, rows), fill, rng)
    tensors = {"A": Tensor.from_numpy(a, fmts[0], fill=fill), "B": Tensor.from_numpy(b, fmts[1], fill=fill),
               "C": Tensor.from_numpy(c, fmts[2], fill=fill), "T": Tensor.from_numpy(t, fmts[3], fill=fill)}
    prog = FORMS[form]
    tensors = {t: v for t, v in tensors.items() if f"{t}[" in prog}
    kernel, got = checked_kernel(prog, want_of(form, a, b, c, t), out, **tensors)
    if out != "dense":
        coords, _ = got.to_coords()
        assert np.all(np.diff(coords[0]) > 0)
        # (proven in order when lowered: no call validates the output)
        assert not kernel.lowered.validate_output, kernel.lowered.validate_output


@pytest.mark.parametrize("fa", ["csr", "coo"])
@pytest.mark.parametrize("order", ["ravel first", "vector first", "two ravels"])
def test_the_array_front_end_concatenates_a_ravel_and_a_vector_in_one_kernel(fa, order):
    rng = np.random.default_rng(7)
    a, x, c = data((6, 8), 0.0, rng), data(10, 0.0, rng), data((2, 5), 0.0, rng)
    A, X, C = (xp.asarray(Tensor.from_numpy(v, f)) for v, f in ((a, fa), (x, "sparse"), (c, "csr")))
    parts, want = {"ravel first": ([A.reshape(48), X], [a.ravel(), x]),
                   "vector first": ([X, A.reshape(-1)], [x, a.ravel()]),
                   "two ravels": ([A.reshape(-1), C.reshape(10)], [a.ravel(), c.ravel()])}[order]
    kernel = one_kernel(xp.concat(parts))
    got = kernel()
    assert got.format.levels[0].name == "SparseList"
    np.testing.assert_array_equal(got.to_numpy(), np.concatenate(want))
    assert not kernel.lowered.validate_output


@pytest.mark.parametrize("ft", ["csf", "coo", "dense"])
@pytest.mark.parametrize("order", ["2-D first", "3-D first", "two 3-D"])
def test_the_array_front_end_concatenates_ravels_of_other_ranks_in_one_kernel(ft, order):
    # (a 3-D ravel beside a 2-D one: 'collapse(B[n, p, q], (n, p) -> r): the looplet strategy lowers a collapse
    # whose index r is a loop of the kernel's output; here another shape operator makes it', materialized)
    rng = np.random.default_rng(11)
    a, t, u = data((3, 4), 0.0, rng), data((2, 3, 2), 0.0, rng), data((2, 2, 3), 0.0, rng)
    A, T, U = (xp.asarray(Tensor.from_numpy(v, f)) for v, f in ((a, "csr"), (t, ft), (u, "csf")))
    parts, want = {"2-D first": ([A.reshape(-1), T.reshape(-1)], [a.ravel(), t.ravel()]),
                   "3-D first": ([T.reshape(-1), A.reshape(-1)], [t.ravel(), a.ravel()]),
                   "two 3-D": ([T.reshape(12), U.reshape(-1)], [t.ravel(), u.ravel()])}[order]
    kernel = one_kernel(xp.concat(parts))
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), np.concatenate(want))
    # (a loop for each index of each part, the 3-D parts' three nested)
    program = kernel.trace.find("program")[0].after_text
    assert program.count("for ") == {"2-D first": 5, "3-D first": 5, "two 3-D": 6}[order], program


@pytest.mark.parametrize("ft", ["csf", "coo", "dense"])
@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 8), (2, 12)])
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_a_split_of_a_concatenation_of_ravels_of_other_ranks_is_one_kernel(ft, shape, fill):
    # (each part read where the split's index falls in it, the 3-D part's collapse of a collapse gathered at the
    # quotients and remainders of it: 'where each part reads its index p in its accesses directly', materialized)
    rng = np.random.default_rng(13)
    a, t = data((3, 4), fill, rng), data((2, 3, 2), fill, rng)
    A, T = xp.asarray(Tensor.from_numpy(a, "csr", fill=fill)), xp.asarray(Tensor.from_numpy(t, ft, fill=fill))
    kernel = one_kernel(xp.reshape(xp.concat([A.reshape(-1), T.reshape(-1)]), shape))
    want = np.concatenate([a.ravel(), t.ravel()]).reshape(shape)
    got = kernel()
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), want)


@loop_program
def ravel_then_vector(c, A, b):
    for k in _:
        for l in _:
            c[l + k * A.shape[1]] = A[k, l]
    for m in _:
        c[m + A.shape[0] * A.shape[1]] = b[m]


@loop_program
def vector_then_ravel_too_soon(c, A, b):
    for m in _:
        c[m] = b[m]
    for k in _:
        for l in _:
            c[l + k * A.shape[1] + 2] = A[k, l]


def test_a_later_nest_not_provably_after_the_earlier_is_still_refused():
    a = np.array([[1.0, 0, 2], [0, 3, 0]])
    A, b = Tensor.from_numpy(a, "csr"), Tensor.from_numpy(np.array([0.0, 4, 5, 0]), "sparse")
    c = Tensor.from_numpy(np.zeros(10), "sparse")
    got = compile_program(ravel_then_vector, c=c, A=A, b=b)(A=A, b=b)
    np.testing.assert_array_equal(got.to_numpy(), np.concatenate([a.ravel(), b.to_numpy()]))
    # (b's coordinates, [0, |b|), may reach past the ravel's start at 2: not provably in order)
    with pytest.raises(ProgramError, match=r"output c is written by two loops .* by different loop nests"):
        compile_program(vector_then_ravel_too_soon, c=c, A=A, b=b)


@pytest.mark.parametrize("ft", ["csf", "coo", "dense"])
@pytest.mark.parametrize("fa", ["csr", "coo"])
@pytest.mark.parametrize("shape", [(1, 29), (29, 1)])
@pytest.mark.parametrize("fill", [0.0, np.nan])
def test_a_concatenation_of_ravels_given_an_extent_1_axis_is_one_kernel(ft, fa, shape, fill):
    # (into a CSR, (29, 1): each row's fiber written by the nest of its part, the 3-D ravel's rows n + (m + l·|m|)·|n|
    # by three loops, then the vector's, the append-order check spanning each nest's rows ('the second nest would
    # append to fibers the first closed'); into a COO, (1, 29): out[i, ...] under the row's one-step loop, the parts'
    # columns compared ('by different loop nests'); each refused before, and materialized)
    rng = np.random.default_rng(5)
    t, a, v = data((2, 3, 2), fill, rng), data((3, 4), fill, rng), data(5, fill, rng)
    T, A = xp.asarray(Tensor.from_numpy(t, ft, fill=fill)), xp.asarray(Tensor.from_numpy(a, fa, fill=fill))
    V = xp.asarray(Tensor.from_numpy(v, "sparse_vector", fill=fill))
    kernel = one_kernel(xp.reshape(xp.concat([T.reshape(-1), A.reshape(-1), V]), shape))
    want = np.concatenate([t.ravel(), a.ravel(), v]).reshape(shape)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.sampled_from([(2, 3, 2), (3, 4), (5,), (0, 3), (1, 1, 2)]), min_size=2, max_size=3),
       fmts=st.lists(st.sampled_from(["csf", "coo", "dense", "csr"]), min_size=3, max_size=3),
       column=st.booleans(), fill=st.sampled_from(FILLS), seed=st.integers(0, 2 ** 16))
@example(parts=[(2, 3, 2), (5,)], fmts=["dense", "coo", "csr"], column=True, fill=0.0, seed=0)
def test_ravels_given_an_extent_1_axis_by_property(parts, fmts, column, fill, seed):
    """A concatenation of ravels of 3-D, 2-D and 1-D operands (empty ones too) given an extent-1 axis in front or
    behind: one kernel into the default output (CSR for a column of rows, COO for a row), against numpy and the
    interpreter."""
    rng = np.random.default_rng(seed)
    arrays, operands = [], []
    for shape, f in zip(parts, fmts):
        a = data(shape, fill, rng)
        fmt = "sparse_vector" if len(shape) == 1 else f if len(shape) == 3 else ("csr" if f in ("csf", "csr") else f)
        fmt = "coo" if len(shape) == 3 and fmt == "csr" else fmt
        arrays.append(a)
        operands.append(xp.asarray(Tensor.from_numpy(a, fmt, fill=fill)).reshape(-1))
    n = sum(a.size for a in arrays)
    shape = (n, 1) if column else (1, n)
    kernel = one_kernel(xp.reshape(xp.concat(operands), shape))
    want = np.concatenate([a.ravel() for a in arrays]).reshape(shape)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
