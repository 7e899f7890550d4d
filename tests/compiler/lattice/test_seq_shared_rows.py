"""A row at a constant coordinate read several times, ``(sign(a) * a + a)[2]`` of a 2-D sparse ``a``, walked once
by the lattice strategy for all its reads (issue 30).

Before, each read had its own cursor (``A``, ``A'``, ``A''``...), their cases multiplying: 3,201 lines of C and
15 s of lowering for a CSR of fill NaN; the lattice said it shares no fiber (``shares_constant_fibers``), so the
array front end computed the whole ``sign(a) * a + a`` apart and indexed its result. Now reads share one cursor
wherever no intersection with another access's reads moves it apart from its other reads
(compiler.lattice.seqreads.separate_reads): 152 lines, one kernel; ``a[2] + a[2] * b[2]`` keeps two. Each
kernel against numpy, the dense oracle (compiler.evaluate), the IR interpreter and the sequence CFIR's
interpreter; fills 0, 1, NaN and ±inf, NaN and ±inf stored, an empty and an all-stored row."""

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import Tensor, array as xp
from compiler.lattice.seqderive import seq_evaluate
from compiler.notation.ast import accesses

nan, inf = np.nan, np.inf


def matrix(fmt, fill, seed=0, density=0.5, shape=(3, 4), stored=(2.0, -1.5, inf, -inf, nan)):
    """A numpy matrix of ``fill``, ``density`` of its entries stored (of ``stored``), as a Tensor."""
    r = np.random.default_rng(seed)
    x = np.where(r.random(shape) < density, r.choice(stored, shape), fill)
    return x, Tensor.from_numpy(x, fmt, fill=fill)


def checked(k, want, **tensors):
    """``k`` (checked) right against numpy's ``want``, the dense oracle of its statement, the IR interpreter and
    the sequence CFIR's interpreter; the CFIR's text."""
    args = tensors or k.arguments
    with np.errstate(invalid="ignore", over="ignore"):
        got = k(**tensors)
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
        np.testing.assert_array_equal(ss.evaluate(k.program, **args)[0], want)
        np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
        np.testing.assert_array_equal(seq_evaluate(k.program, **args), want)
    return k.trace.find("cfir")[0].after_text


@pytest.mark.parametrize("fmt, fill", [("csr", nan), ("coo", 0.0), ("csr", -inf), ("dense", 1.0), ("coo", inf)])
def test_the_issue_expression_walks_the_row_once(fmt, fill):
    x, t = matrix(fmt, fill)
    a = xp.asarray(t)
    k = (xp.sign(a) * a + a)[2].lower(strategy="lattice", checked=True)
    assert not any(s.stage in ("materialize", "retry", "convert") for s in k.trace.steps)
    with np.errstate(invalid="ignore"):
        cfir = checked(k, (np.sign(x) * x + x)[2])
    assert "A'" not in cfir and cfir.count("while ") == 1, cfir
    if fmt == "csr" and fill != fill:
        assert len(k.c_source.splitlines()) < 300     # (3,201 lines before)


@pytest.mark.parametrize("density", [0.0, 1.0])
def test_an_empty_and_an_all_stored_row(density):
    x, t = matrix("csr", nan, 1, density)
    a = xp.asarray(t)
    k = (xp.square(a) - a * a + a)[1].lower(strategy="lattice", checked=True)
    assert not k.trace.find("materialize")
    with np.errstate(invalid="ignore"):
        assert "A'" not in checked(k, (np.square(x) - x * x + x)[1])


#: (statement, whether a read is walked apart at fill NaN and at fill 0: an intersection holding it beside another
#: access, that read again outside it, or reads of it under different shape operators; at fill NaN a sum
#: intersects too, its fill absorbing)
STATEMENTS = [
    ("y[i] = A[2, i] * A[2, i] + A[2, i] + A[1, i]", (False, False)),
    ("y[i] = (A[2, i] * A[2, i] + A[2, i]) * A[1, i]", (False, False)),
    ("y[i] = (A[2, i] + A[0, i]) * (A[2, i] + A[1, i])", (True, False)),
    ("y[i] = A[2, i] + A[2, i] * A[1, i]", (True, True)),
    ("y[i] = (A[2, i] * A[2, i] - A[2, i]) * A[0, i] + A[1, i] * A[2, i]", (True, True)),
    ("y[l] = concat((A[2, i] + A[2, i] * A[1, i], A[0, j]), (i, j) -> l)", (True, True)),
    ("y[l] = concat((A[2, i] * A[2, i] * A[1, i], A[0, j]), (i, j) -> l)", (False, False)),
]


def test_statements_share_a_cursor_where_no_other_access_moves_it():
    for (statement, apart), (fmt, fill) in itertools.product(STATEMENTS, [("csr", nan), ("coo", 0.0)]):
        # (finite entries stored: a product of fill 0 intersects, no stored NaN or inf times 0 to keep)
        _, t = matrix(fmt, fill, len(statement), stored=(2.0, -1.5, 0.5))
        with np.errstate(invalid="ignore", over="ignore"):
            want = ss.evaluate(statement, A=t)[0]
            k = ss.lower(statement, strategy="lattice", checked=True, A=t)
        # (each distinct access read under a name of its own, A, A', ...: more names where a read is walked apart)
        names = set(re.findall(r"\bA'*(?=\()", checked(k, want, A=t)))
        assert (len(names) > len(set(accesses(ss.parse(statement).rhs)))) == apart[fill == 0.0], (statement, names)


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(["csr", "coo", "dense"]), st.sampled_from([0.0, 1.0, nan, inf, -inf]),
       st.sampled_from([0.0, 0.5, 1.0]), st.integers(0, 2), st.integers(0, 99))
def test_repeated_rows_by_property(fmt, fill, density, row, seed):
    x, t = matrix(fmt, fill, seed, density)
    a = xp.asarray(t)
    k = (xp.abs(a) * a - xp.sign(a) + a)[row].lower(strategy="lattice", checked=True)
    assert not k.trace.find("materialize")
    with np.errstate(invalid="ignore", over="ignore"):
        assert "A'" not in checked(k, (np.abs(x) * x - np.sign(x) + x)[row])
