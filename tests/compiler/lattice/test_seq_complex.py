"""Shape operators over complex arrays by the lattice strategy (issue 30): the sequence lowering took a
concatenation's fill as a real number and refused a complex tensor's, ``0j``, so ``concat([a, b])`` of
complex matrices was refused ("computes real numbers, not the complex 0j") and the array front end
materialized each part before one more kernel. A complex constant whose imaginary part is 0 is now that
real number, which C widens where it is written, and one with an imaginary part a complex constant (a
literal ``1j``, a part's fill ``1j``, the fold of a sum's fill). Each kernel against numpy, the IR interpreter
and the sequence CFIR's interpreter (tests.compiler.lattice.test_seq_split_groups.array_kernel)."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from tests.compiler.lattice.test_seq_split_groups import array_kernel

nan, inf = np.nan, np.inf
#: stored values: a NaN and infinities in either part, a negative zero
ODD = (complex(nan, 1.0), complex(inf, -2.0), complex(-0.0, 0.0), complex(1.5, -inf))


def part(fmt, shape, seed, density=0.5, odd=()):
    """A complex numpy matrix with ``density`` of its entries stored (``odd`` first), and it as a lazy Array."""
    r = np.random.default_rng(seed)
    x = np.where(r.random(shape) < density, r.choice([1 + 2j, -3.5j, 2.0], shape), 0j)
    x.flat[:len(odd)] = odd
    return x, xp.asarray(Tensor.from_numpy(x, fmt))


def sparse_kernel(expr, want, format):
    """``expr`` lowered by the lattice into ``format``, right against numpy and the IR interpreter."""
    with np.errstate(invalid="ignore"):
        k = expr.lower(format=format, strategy="lattice", checked=True)
        assert not k.trace.find("materialize"), [s.stage for s in k.trace.steps]
        got = k()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(k.interpret().to_numpy(), want)
    return k


@pytest.mark.parametrize("fmts", [("csr", "csr"), ("coo", "csr"), ("csr", "dense")])
def test_a_vstack_and_an_hstack_of_complex_matrices(fmts):
    (x, a), (y, b) = part(fmts[0], (4, 3), 1, odd=ODD[:2]), part(fmts[1], (2, 3), 2, odd=ODD[2:])
    k = array_kernel(xp.concat([a, b], axis=0), np.vstack([x, y]))
    assert k.trace.find("seq-derive") and k.program.rhs is not None
    (z, c) = part(fmts[1], (4, 2), 3, odd=ODD[1:3])
    array_kernel(xp.concat([a, c], axis=1), np.hstack([x, z]))


@pytest.mark.parametrize("format", ["csr", "coo", "dense"])
def test_into_each_output_format(format):
    (x, a), (y, b) = part("csr", (3, 4), 4, odd=ODD), part("coo", (5, 4), 5)
    sparse_kernel(xp.concat([a, b], axis=0), np.vstack([x, y]), format)


def test_fused_kernels_of_the_paper_over_complex_values():
    """SpMV of a vstack, a collapse times a vector, a strided slice plus a literal, a sum over a concat."""
    (x, a), (y, b) = part("csr", (4, 5), 6, odd=ODD[:1]), part("csr", (3, 5), 7, odd=ODD[3:])
    v = np.arange(5) - 1j * np.arange(5)
    w = np.arange(20) * (1 + 1j)
    with np.errstate(invalid="ignore"):
        array_kernel(xp.concat([a, b], axis=0) @ xp.asarray(v), np.vstack([x, y]) @ v)
        array_kernel(xp.sum(a.reshape(-1) * xp.asarray(w)), np.sum(x.reshape(-1) * w))
        array_kernel(a[::-2] + 1, x[::-2] + 1)
        array_kernel(xp.sum(xp.concat([a, b], axis=0), axis=0), np.vstack([x, y]).sum(axis=0))


def test_complex_constants_and_fills_in_a_concatenation():
    """A literal with an imaginary part in a part (``concat((A[i] + 1j, B[j]))``), a part of fill ``1j``,
    and the fold of a sum's fill ``1j``: the CFIR's constants are complex there (they were refused, and the
    array front end materialized the part)."""
    x, y = np.array([1j, 0, complex(nan, 2)]), np.array([0, 3 - 1j])
    a, b = Tensor.from_numpy(x, "sparse"), Tensor.from_numpy(y, "sparse")
    with np.errstate(invalid="ignore"):
        k = ss.lower("y[k] = concat((A[i] + 1j, B[j]), (i, j) -> k)", "lattice", A=a, B=b)
        np.testing.assert_array_equal(k(A=a, B=b).to_numpy(), np.concatenate([x + 1j, y]))
        array_kernel(xp.concat([xp.asarray(a) + 1j, xp.asarray(b)], axis=0), np.concatenate([x + 1j, y]))
    z = np.array([[1j, 2], [1j, 1j]])
    c = xp.asarray(Tensor.from_numpy(z, "csr", fill=1j))
    (w, d) = part("csr", (3, 2), 8, odd=ODD[:2])
    with np.errstate(invalid="ignore"):
        array_kernel(xp.concat([d, c], axis=0), np.vstack([w, z]))
        array_kernel(xp.sum(c.reshape(-1)), z.sum())
        array_kernel(xp.sum(xp.concat([d, c], axis=0), axis=0), np.vstack([w, z]).sum(axis=0))


def test_a_sum_of_a_collapse_folds_a_complex_fill():
    """``sum(collapse(A))`` of a complex CSR of fill ``2+0j`` or ``1j``: the coordinates the loops skip add the
    fill. Both crashed the lowering on main (a TypeError printing the fold's fill)."""
    for x, fill in ((np.array([[2 + 0j, 2, 2], [1j, 2, complex(nan, 1)]]), 2 + 0j), (np.array([[1j, 2]]), 1j)):
        a = Tensor.from_numpy(x, "csr", fill=fill)
        with np.errstate(invalid="ignore"):
            k = ss.lower("y[] = sum[j](collapse(A[p, q], (p, q) -> j))", "lattice", A=a)
            np.testing.assert_array_equal(k(A=a).to_numpy(), x.sum())
            np.testing.assert_array_equal(k.interpret(A=a).to_numpy(), x.sum())


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from(["csr", "coo"]), st.integers(0, 4),
       st.integers(0, 4), st.integers(1, 3), st.floats(0, 1), st.integers(0, 2 ** 16),
       st.sampled_from([0j, 1j, 2 + 0j, complex(nan, 0), -1 - 1j]))
def test_concatenations_of_complex_parts_by_property(f1, f2, m, n, cols, density, seed, fill):
    """The second part of any fill (the result's is the first's, 0j)."""
    (x, a), (y, _) = part(f1, (m, cols), seed, density, ODD[:seed % 3]), part(f2, (n, cols), seed + 1, density)
    y = np.where(y == 0, fill, y)
    b = xp.asarray(Tensor.from_numpy(y, f2, fill=fill))
    with np.errstate(invalid="ignore"):
        array_kernel(xp.concat([a, b], axis=0), np.vstack([x, y]))



@pytest.mark.parametrize("at", [(0, 0), (1, 2), (39, 2)])
def test_a_product_of_a_complex_fill_multiplies_it_in_order_at_every_coordinate(at):
    """``prod[j](collapse(A))`` of a CSR of fill ``1j`` with an infinite entry: folding the fill in to the power of
    the coordinates skipped, after the entries, is wrong where a value is infinite (a complex product is not
    associative: ``(inf * 1j) * 1j`` is ``nan + nan j``, ``inf * (1j * 1j)`` is ``-inf + nan j``), so the lattice
    refused it, naming the looplets. Its loop now walks every coordinate (``∪ U``), each term multiplied in numpy's
    order, as the looplets' does; nothing is counted or folded."""
    x = np.full((40, 3), 1j)
    x[0, 1], x[at] = 2.0, complex(inf, 0)
    a = Tensor.from_numpy(x, "csr", fill=1j)
    with np.errstate(invalid="ignore"):
        lattice, looplets = (ss.lower("y[] = prod[j](collapse(A[p, q], (p, q) -> j))", s, A=a)
                             for s in ("lattice", "looplets"))
        for k in (lattice, looplets):
            np.testing.assert_array_equal(k(A=a).to_numpy(), x.prod())
            np.testing.assert_array_equal(k.interpret(A=a).to_numpy(), x.prod())
    cfir = lattice.trace.find("cfir")[0].after_text
    assert "∪ U_j" in cfir and "**" not in cfir and "n_t" not in cfir, cfir
    (derivation,) = [a.text for s in lattice.trace.find("seq-derive") for a in s.artifacts
                     if a.kind == "seq-derivation"]
    assert "multiplies its fill in order" in derivation, derivation


PRODUCTS = [lambda m, x, y: m.prod(x[::-1], axis=0), lambda m, x, y: m.prod(x[:, 1:], axis=1),
            lambda m, x, y: m.prod(x.reshape(-1)[1:]),
            lambda m, x, y: m.prod((m.concat if m is xp else np.concatenate)([x, y]), axis=0),
            lambda m, x, y: m.prod((m.concat if m is xp else np.concatenate)([x, y])),
            lambda m, x, y: m.prod((m.concat if m is xp else np.concatenate)([x, y], axis=1), axis=1)]


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(range(len(PRODUCTS))), st.sampled_from(["csr", "coo", "dense"]), st.integers(0, 4),
       st.integers(1, 3), st.floats(0, 1), st.integers(0, 2 ** 16),
       st.sampled_from([1j, 1 + 1j, -1 - 1j, complex(nan, 1.0), complex(0.5, inf)]),
       st.sampled_from([1j, 2 + 0j, 1 + 0j]))
@example(0, "csr", 3, 3, 0.5, 1, 1 + 1j, 1j)       # (a product into a vector, the loops around the output's)
@example(3, "coo", 2, 2, 0.0, 2, 1j, 2 + 0j)       # (every entry the fill, the parts' fills apart)
@example(4, "dense", 4, 3, 1.0, 3, -1 - 1j, 1j)    # (every entry stored, an infinity among them)
# (found by a fuzz: a row's product reached inf + inf j, then times the second part's fill 1 + 0j, which numpy and
# the kernel make nan + nan j; the IR interpreter passed the literal as a real 1.0 to the complex helper, which C
# converts to 1 + 0j)
@example(5, "csr", 4, 2, 0.042525833888270914, 65037, 1 + 1j, 1 + 0j)
# (a fuzz's too: a column of the fill only, whose product the front end took as f ** 2, -inf + inf j, where numpy's
# of [f, f] is nan + nan j: the output's fill is now the fill multiplied in numpy's order, Operator.reduce_fill)
@example(0, "csr", 2, 2, 0.8494604111895369, 37233, complex(0.5, inf), 1 + 0j)
def test_complex_products_over_shape_operators_by_property(build, fmt, m, n, density, seed, fill, other):
    """Each product of a complex fill not its fixed point multiplies in numpy's order: one lattice kernel, right
    against numpy, the IR interpreter and the sequence CFIR's interpreter; the stored values hold infinities and
    NaN."""
    r = np.random.default_rng(seed)
    x = np.where(r.random((m, n)) < density, r.choice([1 + 2j, -0.5j, 2.0, complex(inf, 1), complex(nan, 0)],
                                                    (m, n)), fill)
    shape = (m, 2) if build == len(PRODUCTS) - 1 else (2, n)     # (beside x, or below it)
    y = np.where(r.random(shape) < density, r.choice([3j, -1.0], shape), other)
    a = xp.asarray(Tensor.from_numpy(x, fmt, fill=fill))
    b = xp.asarray(Tensor.from_numpy(y, fmt, fill=other))
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.asarray(PRODUCTS[build](np, x, y))
    array_kernel(PRODUCTS[build](xp, a, b), want)
