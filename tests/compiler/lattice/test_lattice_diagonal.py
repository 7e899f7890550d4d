"""A repeated index (a diagonal, ``A[i, i]``) under the lattice strategy (issue 29, first increment).

The loop over ``i`` locates every Dense level storing a mode of ``i`` at ``i``, and searches a sparse
last level for ``i`` under the level above, located or iterated (CSR, CSC, DCSR and COO by bisection,
SparseHash by probing, SparseByteMap by its table), and locates a Dense last level under a sparse one
(TACO's ``{sparse, dense}``); a sparse level in the middle, or a Dense one there under a sparse one, is
refused with a message naming the access, the index and the level (the looplets
strategy lowers those). Each kernel is checked against compiler.evaluate (the dense
oracle), the CFIR interpreter and numpy (np.diagonal, np.trace).
"""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, evaluate, lower
from compiler.errors import ShapeError, StrategyError
from compiler.format import Format, coo, csc, csr, dcsr, dense
from compiler.levels import Dense, Element, RunList, SparseByteMap, SparseHash, SparseList
from compiler.testing import check_lowered, random_sparse

PROGRAMS = {
    "y[i] = A[i, i]": lambda a, x: np.diagonal(a),
    "s = A[i, i]": lambda a, x: np.trace(a),
    "y[i] = A[i, i] * x[i]": lambda a, x: np.diagonal(a) * x,
}


def dense_transposed(fill=0.0):
    """Dense levels storing the columns first: locating ``A[i, i]`` does not depend on the order."""
    return Format(Dense(Dense(Element(fill))), mode_order=(1, 0))


def _hash_rows(fill=0.0):
    return Format(Dense(SparseHash(Element(fill))))


def _bytemap_rows(fill=0.0):
    return Format(Dense(SparseByteMap(Element(fill))))


def _over(outer, inner):
    """``outer`` rows over ``inner`` columns (a sparse level over dense rows, a hash of lists, ...)."""
    return lambda fill=0.0: Format(outer(inner(Element(fill))))


#: the formats whose diagonal the lattice strategy reads: make(fill) -> Format
READ = {"dense": partial(dense, 2), "dense-transposed": dense_transposed, "csr": csr, "csc": csc,
        "dcsr": dcsr, "coo": partial(coo, 2), "hash": _hash_rows, "bytemap": _bytemap_rows,
        "list-of-dense": _over(SparseList, Dense), "bytemap-of-dense": _over(SparseByteMap, Dense),
        "hash-of-lists": _over(SparseHash, SparseList)}


def _check(prog, fmt, a, x):
    """The lattice kernel of ``prog`` against the oracle and the interpreter (check_lowered) and numpy."""
    tensors = {"A": Tensor.from_numpy(a, fmt), **({"x": x} if "x[i]" in prog else {})}
    k = check_lowered(prog, checked=True, **tensors)
    got = k(**tensors)
    got = got.to_numpy() if hasattr(got, "to_numpy") else got
    np.testing.assert_allclose(got, PROGRAMS[prog](a, x))
    return k


@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("fmt", [dense(2), dense_transposed()], ids=["dense", "dense-transposed"])
def test_diagonal_of_a_dense_matrix(prog, fmt):
    a = np.array([[1.0, 2.0, 0.0], [4.0, 0.0, 6.0], [7.0, 8.0, 9.0]])
    x = np.array([1.0, 2.0, 3.0])
    k = _check(prog, fmt, a, x)
    # one loop over i, A located at (i, i): no search, no second loop
    assert k.c_source.count("for (") == 1
    assert "i * A1_size + i" in k.c_source or "i * A0_size + i" in k.c_source


@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("make", ["csr", "csc", "dcsr", "coo", "hash", "bytemap"])
def test_diagonal_of_a_sparse_last_level_is_searched(prog, make):
    """A missing diagonal entry (A[1, 1]), an empty row and column (2), entries both sides of the
    diagonal: the search finds i or reads the fill."""
    a = np.array([[1.0, 0.0, 0.0, 2.0], [3.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0], [5.0, 6.0, 0.0, 7.0]])
    x = np.array([1.0, 2.0, 3.0, 4.0])
    k = _check(prog, READ[make](), a, x)
    assert " : -1;" in k.c_source   # the search's result: the position of i, or -1


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 6), density=st.sampled_from([0.0, 0.4, 1.0]), fill=st.sampled_from([0.0, 1.5]),
       prog=st.sampled_from(sorted(PROGRAMS)), make=st.sampled_from(sorted(READ)), seed=st.integers(0, 2 ** 16))
@example(n=3, density=0.4, fill=1.5, prog="s = A[i, i]", make="csr", seed=0)
@example(n=0, density=1.0, fill=0.0, prog="y[i] = A[i, i] * x[i]", make="dense-transposed", seed=0)
@example(n=5, density=0.4, fill=1.5, prog="y[i] = A[i, i]", make="hash", seed=1)
@example(n=4, density=0.4, fill=1.5, prog="y[i] = A[i, i] * x[i]", make="coo", seed=2)
@example(n=5, density=0.4, fill=1.5, prog="y[i] = A[i, i]", make="list-of-dense", seed=3)
def test_diagonal_property(n, density, fill, prog, make, seed):
    """Every format the diagonal is read from, sizes 0 to 6, fills 0 and 1.5 (a missing diagonal
    entry reads the fill), against the oracle, the interpreter and numpy."""
    rng = np.random.default_rng(seed)
    a = random_sparse((n, n), density, rng, fill=fill)
    x = random_sparse((n,), 1.0, rng)
    _check(prog, READ[make](fill), a, x)


@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("make", ["dense", "csr", "csc", "dcsr", "coo"])
def test_a_non_square_diagonal_is_a_shape_error(prog, make):
    """The oracle refuses ``A[i, i]`` of a 3 x 4 A; the compiled kernel refuses it the same way
    (the extents of i's two modes are checked before the loop, so it never reads past a row)."""
    a = np.arange(12.0).reshape(3, 4)
    x = np.ones(3)
    with pytest.raises(ShapeError, match=r"index i has extent 3 in A\[i, i\] \(mode 0\) but 4"):
        evaluate(prog, A=a, x=x)
    xs = {"x": x} if "x[i]" in prog else {}
    k = lower(prog, "lattice", A=Tensor.from_numpy(np.eye(3), READ[make]()), **xs)
    with pytest.raises(ShapeError, match=r"index i has extent (3 in A \(mode 0\) but 4 in A \(mode 1\)"
                                         r"|4 in A \(mode 1\) but 3 in A \(mode 0\))"):
        k(A=Tensor.from_numpy(a, READ[make]()), **xs)


def test_a_diagonal_block_of_a_three_mode_tensor():
    """``y[i, j] = B[i, i, j]``: the repeated i is located in B's Dense levels, j iterated in its SparseList."""
    rng = np.random.default_rng(3)
    b = random_sparse((4, 4, 5), 0.4, rng)
    B = Tensor.from_numpy(b, Format(Dense(Dense(SparseList(Element(0.0))))))
    k = check_lowered("y[i, j] = B[i, i, j]", B=B)
    np.testing.assert_allclose(k(B=B).to_numpy(), np.einsum("iij->ij", b))


@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("outer", [SparseList, SparseHash, SparseByteMap, RunList], ids=lambda c: c.name)
def test_a_dense_last_level_under_a_sparse_one_is_located_at_i(prog, outer):
    """``A[i, i]`` of sparse rows over dense ones (TACO's ``{sparse, dense}``): the rows are iterated
    (or located), and the dense row's slot ``p * N + i`` read where the row is at i; it was refused
    ("locates only as a Dense level under a Dense one")."""
    a = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [4.0, 0.0, 5.0, 6.0], [0.0, 7.0, 0.0, 0.0]])
    k = _check(prog, _over(outer, Dense)(), a, np.array([1.0, 2.0, 3.0, 4.0]))
    assert "A1_size + i" in k.c_source and " : -1;" not in k.c_source   # (a slot is always stored: no -1)


@pytest.mark.parametrize("prog", PROGRAMS)
@pytest.mark.parametrize("make, level, name", [
    (lambda: Format(SparseList(Dense(Dense(Element(0.0))))), 1, "Dense"),
    (lambda: Format(Dense(SparseList(SparseList(Element(0.0))))), 1, "SparseList")],
    ids=["dense-in-the-middle-under-sparse", "sparse-in-the-middle"])
def test_a_diagonal_the_lattice_cannot_find_is_refused_clearly(prog, make, level, name):
    """A Dense level of i under a sparse one above the last, a sparse level of i above the last: the
    message names the access, the index and the level, and says what to do; the looplets strategy
    lowers them."""
    a = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0], [4.0, 0.0, 5.0]])
    x = np.array([1.0, 2.0, 3.0])
    if level == 1:   # a three-mode B[i, i, j] read as A
        prog = prog.replace("A[i, i]", "A[i, i, j]").replace("y[i]", "y[i, j]")
        a = np.stack([a, 2 * a, a])
    A = Tensor.from_numpy(a, make())
    xs = {"x": x} if "x[i]" in prog else {}
    with pytest.raises(StrategyError, match=rf"A\[i, i(, j)?\] repeats index i \(a diagonal\): the lattice strategy "
                                            rf"finds i in A's level {level} \({name}\).*strategy='looplets'"):
        lower(prog, "lattice", A=A, **xs)
    check_lowered(prog, strategy="looplets", A=A, **xs)


@pytest.mark.parametrize("prog", ["C[i, j] = A[i, i] * B[i, j]", "y[j] = A[i, i] * B[i, j]",
                                  "s = A[i, i] * B[i, i]", "y[i] = A[i, i] + x[i]", "y[i] = A[i, i] * x[i]"])
@pytest.mark.parametrize("make", ["csr", "csc", "dcsr", "coo", "hash", "list-of-dense", "bytemap-of-dense",
                                  "hash-of-lists"])
def test_a_diagonal_with_other_operands(prog, make):
    """The searched diagonal reads like a dense operand next to sparse ones (a CSR B, a sparse x); under
    a row that is located (a byte map's, a hash's) where x is iterated, it is found in the case the
    row is stored (the lowering crashed, a KeyError, before)."""
    rng = np.random.default_rng(2)
    a, b, x = random_sparse((5, 5), 0.5, rng), random_sparse((5, 5), 0.5, rng), random_sparse((5,), 0.5, rng)
    tensors = {"A": Tensor.from_numpy(a, READ[make]()), "B": Tensor.from_numpy(b, csr()),
               "x": Tensor.from_numpy(x, "sparse_vector")}
    check_lowered(prog, checked=True, **{t: v for t, v in tensors.items() if f"{t}[" in prog})


@pytest.mark.parametrize("make", ["dense", "csr", "hash"])
def test_a_diagonal_kernel_trace_round_trips(make):
    """The CFIR names each level located or searched at i, and the trace (with the searched level
    in it) saves to JSON and reads back, as the explorer needs."""
    from compiler.trace import Trace
    k = lower("y[i] = A[i, i] * x[i]", "lattice", A=Tensor.from_numpy(np.eye(3), READ[make]()), x=np.ones(3))
    cfir = next(s for s in k.trace.steps if s.stage == "cfir").artifacts[0].text
    if make != "dense":   # (a dense A is located at (i, i) at once)
        assert "with (A0 = i, A1 = i, x = i)" in cfir
    text = k.trace.to_json()
    assert Trace.from_json(text).to_json() == text
