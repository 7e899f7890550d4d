"""A column-major flatten of a 3-D tensor (issue 30): ``xp.permute_dims(a3, (2, 1, 0)).reshape(-1)`` and the other
collapses whose order is not the storage order of a CSF, COO(3), Dense(Dense(SparseList)) or dense input, nested
collapses ``c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m)``. Refused by the lattice on main
(the array front end retried, materializing the transpose); one kernel now (:mod:`compiler.lattice.seqcolmajor`):
the collapses undone, ``c[k, j, i] = A[i, j, k]``, the loops in ``A``'s storage order, each entry at its flat
coordinate, at random into a dense output, sorted by all its indices but the last (a stable counting sort) into a
sparse one.

Each case against the dense oracle (``compiler.evaluate``), numpy, the IR interpreter and the CFIR interpreter
of the statement with its collapses undone, in the loops' order: fills 0/1/NaN, NaN/±inf stored, empty and
all-fill operands, and by a property; the array forms with no ``retry``, ``materialize`` or ``convert`` step.
"""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, array as xp, evaluate, parse_format
from tests.compiler.lattice.split_kernels import one_lattice_kernel, operand
from tests.compiler.lattice.test_seq_colmajor import lowered

nan, inf = np.nan, np.inf
FORMATS = ["csf", "coo", "Dense(Dense(SparseList(Element(0.0))))", "dense"]
# (each permutation's collapses of A[i, j, k], the major index first, and its loops' order among them)
PERMS = {(2, 1, 0): ("(k, j) -> l), (l, i)", (2, 1, 0)), (1, 0, 2): ("(j, i) -> l), (l, k)", (1, 0, 2)),
         (0, 2, 1): ("(i, k) -> l), (l, j)", (0, 2, 1)), (1, 2, 0): ("(j, k) -> l), (l, i)", (2, 0, 1)),
         (2, 0, 1): ("(k, i) -> l), (l, j)", (1, 2, 0))}


def program(perm, op=""):
    return f"c[m] = collapse(collapse(A[i, j, k], {PERMS[perm][0]} -> m){op}"


def tensor3(shape, fmt, seed, fill=0.0, density=0.5, odd=()):
    a = operand(shape, "dense", seed, density=density, fill=fill, odd=odd)[0]
    return a, Tensor.from_numpy(a, parse_format(fmt, ndim=3, fill=fill))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("perm", list(PERMS))
@pytest.mark.parametrize("out", [None, "sparse", "coo"])
def test_a_3d_column_major_flatten_is_one_kernel(fmt, perm, out):
    a, A = tensor3((2, 3, 4), fmt, 1, odd=(nan, inf, -inf))
    k, got = lowered(program(perm), {"A": A}, out, order=PERMS[perm][1])
    np.testing.assert_array_equal(got, np.transpose(a, perm).reshape(-1))
    # (the loops walk A's levels in order; a sparse output's entries counted and placed by all but the last index)
    cfir = k.trace.find("cfir")[0].after_text
    assert cfir.index("while i <-") < cfir.index("while j <-") < cfir.index("while k <-"), cfir
    assert ("phase 1" in k.c_source) == (out is not None)


@pytest.mark.parametrize("fill", [0.0, 1.0, nan])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("out", [None, "sparse"])
def test_fills_and_empty_or_full_operands(fill, density, out):
    a, A = tensor3((3, 2, 3), "csf", 2, fill=fill, density=density, odd=(nan, -inf) if density else ())
    got = lowered(program((2, 1, 0)), {"A": A}, out, fill=fill, order=(2, 1, 0))[1]
    np.testing.assert_array_equal(got, np.transpose(a, (2, 1, 0)).reshape(-1))


@pytest.mark.parametrize("out", [None, "sparse"])
def test_operators_and_a_second_flatten_fuse_in(out):
    a, A = tensor3((2, 3, 2), "csf", 3, odd=(inf,))
    b, B = tensor3((2, 3, 2), "coo", 4, odd=(-inf, 0.0))
    p = "c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (l, i) -> m) * 2.0 + " \
        "collapse(collapse(B[p, q, r], (r, q) -> s), (s, p) -> m)"
    with np.errstate(invalid="ignore"):
        want = np.transpose(a * 2.0 + b, (2, 1, 0)).reshape(-1)
    k, got = lowered(p, {"A": A, "B": B}, out, order=(2, 1, 0))
    np.testing.assert_array_equal(got, want)
    assert k.c_source.count("phase 1") == (out is not None)


@pytest.mark.parametrize("shape", [(0, 2, 3), (2, 0, 3), (1, 1, 1)])
def test_empty_extents(shape):
    a = np.ones(shape)
    got = lowered(program((2, 1, 0)), {"A": Tensor.from_numpy(a, "csf")}, "sparse", order=(2, 1, 0))[1]
    np.testing.assert_array_equal(got, np.transpose(a, (2, 1, 0)).reshape(-1))


def test_the_nested_collapses_undone():
    from compiler.lattice.seqcolmajor import unflattened
    from compiler.notation import parse
    shapes = {"A": (2, 3, 4)}
    assert str(unflattened(parse(program((1, 2, 0))), shapes)) == "c[j, k, i] = A[i, j, k]"
    # (the inner collapse in the minor place: its indices after the outer's major one)
    assert str(unflattened(parse("c[m] = collapse(collapse(A[i, j, k], (k, j) -> l), (i, l) -> m)"), shapes)) == \
        "c[i, k, j] = A[i, j, k]"
    # (a vector read at m beside it split back into three: twice, at a fresh index)
    assert str(unflattened(parse(program((2, 1, 0), " + b[m]")), {**shapes, "b": (24,)})) == \
        "c[k, j, i] = A[i, j, k] + split(split(b[m], m -> (m1:12, i:2)), m1 -> (k:4, j:3))"


@pytest.mark.parametrize("fmt", ["csf", "coo"])
@pytest.mark.parametrize("perm", [(2, 1, 0), (1, 0, 2), (0, 2, 1)])
def test_the_array_forms_are_one_lattice_kernel(fmt, perm):
    a, A = operand((3, 2, 4), fmt, 5, odd=(nan, inf, -inf))
    for out in (None, "dense"):
        kernel = one_lattice_kernel(xp.permute_dims(A, perm).reshape(-1), np.transpose(a, perm).reshape(-1), out)
        stages = kernel.trace.stages()
        assert not {"retry", "materialize", "convert"} & set(stages), stages
        assert any("flattens column-major" in s.note for s in kernel.trace.find("loop-order"))


@settings(max_examples=7, deadline=None)
@given(st.sampled_from(FORMATS), st.sampled_from(list(PERMS)), st.sampled_from([0.0, 0.0, 1.0, nan]),
       st.sampled_from([0.0, 0.4, 1.0]), st.sampled_from([(), (nan,), (inf, -inf)]),
       st.sampled_from([(1, 2, 3), (3, 1, 2), (2, 2, 2), (2, 3, 1)]), st.sampled_from([None, "sparse", "coo"]),
       st.integers(0, 2**16))
@example("coo", (1, 0, 2), nan, 0.4, (inf, -inf), (2, 2, 2), "coo", 1)
@example("Dense(Dense(SparseList(Element(0.0))))", (2, 0, 1), 1.0, 1.0, (nan,), (2, 3, 1), "sparse", 2)
def test_3d_column_major_flattens_by_property(fmt, perm, fill, density, odd, shape, out, seed):
    if fmt.startswith("Dense("):
        fmt = fmt.replace("0.0", repr(fill))
    a, A = tensor3(shape, fmt, seed, fill=fill, density=density, odd=odd)
    with np.errstate(invalid="ignore"):
        want = evaluate(program(perm), A=A)
    got = lowered(program(perm), {"A": A}, out, fill=float(want[1]), order=PERMS[perm][1])[1]
    np.testing.assert_array_equal(got, np.transpose(a, perm).reshape(-1))
