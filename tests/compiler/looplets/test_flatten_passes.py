"""A CSC's row-major flatten beside a vector under the looplets (compiler.looplets.flatten_passes):
``x + c_csc.reshape(-1)`` copies ``x`` whole in order, then adds ``c``'s stored entries in, column by
column (its fill the operator's identity); ``x * c_csc.reshape(-1)`` of a sparse ``x`` copies ``x``
into a dense workspace first and reads it there. On main a sparse ``x`` beside the flatten was refused
("discordant walk", lower() retried and materialized the flatten), and a dense ``x`` and the output
were read and written at every coordinate column by column (a stride of ``|k|`` through both).
Against numpy, the dense oracle and the IR interpreter; sparse results validated."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import STORED, matrix

nan, inf = np.nan, np.inf

#: the operators of the statement: its text, numpy's, and c's fill the identity of
OPS = {"+": ("{x} + {c}", np.add, 0.0), "*": ("{x} * {c}", np.multiply, 1.0), "-": ("{x} - {c}", np.subtract, 0.0),
       "min": ("min({x}, {c})", np.fmin, inf)}
FLAT = "collapse(c[j, k], (j, k) -> i)"


def program(op: str, flat_first: bool = False) -> str:
    text = OPS[op][0]
    return "y[i] = " + (text.format(x=FLAT, c="x[i]") if flat_first else text.format(x="x[i]", c=FLAT))


def loops_of(kernel) -> list:
    return [line.split("=")[0].split()[1] for line in str(kernel.trace.find("program")[0].after).splitlines()
            if line.strip().startswith("for")]


@pytest.mark.parametrize("xfmt", ["dense", "sparse_vector"])
@pytest.mark.parametrize("out", ["dense", "sparse_vector"])
def test_a_vector_plus_a_cscs_flatten_copies_the_vector_then_adds_the_entries_in(xfmt, out):
    c = np.array([[0.0, 2.0, 0.0], [nan, 0.0, -inf]])
    x = np.array([1.0, 0.0, inf, -2.0, 0.0, 3.0])
    C, X = ss.Tensor.from_numpy(c, "csc", name="c"), ss.Tensor.from_numpy(x, xfmt, name="x")
    kernel, _ = checked_kernel(program("+"), x + c.reshape(-1), out, c=C, x=X)
    assert kernel.trace.find("copy-scatter") and not kernel.trace.find("gather"), kernel.trace
    # (x copied in one loop in order, then c's columns: no coordinate of x read out of order)
    assert loops_of(kernel)[:4] == ["i", "k", "j", "t"], loops_of(kernel)
    body = kernel.c_source.split("int y_kernel", 1)[1]
    assert not re.search(r"x_val\[[^\]]*\*", body), body
    # (the scatter touches c's stored entries only: one update per entry, no loop over its fill runs)
    (scatter,) = [line for line in body.splitlines() if "+= c_val[" in line]
    assert "* c0_size]" in scatter, scatter


@pytest.fixture
def poisoned_empty(monkeypatch):
    """``np.empty`` giving arrays of a value no test stores (it promises no contents): an output the
    runtime leaves unfilled for the kernel to write whole shows any entry the kernel did not write."""
    empty = np.empty

    def poisoned(*args, **kwargs):
        out = empty(*args, **kwargs)
        if out.dtype.kind == "f":
            out.fill(1234.5)
        return out
    monkeypatch.setattr(np, "empty", poisoned)


@pytest.mark.parametrize("xfmt", ["dense", "sparse_vector"])
def test_the_output_a_copy_writes_whole_is_not_filled_before_the_call(xfmt, poisoned_empty):
    # (on main the runtime filled y, n² writes the copy then overwrote: its initial was "fill")
    c = np.array([[0.0, 2.0, 0.0], [nan, 0.0, -inf]])
    x = np.array([1.0, 0.0, inf, -2.0, 0.0, 3.0])
    C, X = ss.Tensor.from_numpy(c, "csc", name="c"), ss.Tensor.from_numpy(x, xfmt, name="x")
    kernel, got = checked_kernel(program("+"), x + c.reshape(-1), "dense", c=C, x=X)
    assert kernel.trace.find("copy-scatter") and kernel.lowered.initial == "none", kernel.lowered.initial
    np.testing.assert_array_equal(kernel(c=C, x=X).to_numpy(), x + c.reshape(-1))   # (and again, the fast path)
    # (x * c_csc.reshape(-1) of c's fill 0 is no copy: y starts at its fill, as before)
    with np.errstate(invalid="ignore"):
        kernel, _ = checked_kernel(program("*"), x * c.reshape(-1), "dense", c=C, x=X)
    assert not kernel.trace.find("copy-scatter") and kernel.lowered.initial == "fill", kernel.lowered.initial


def test_the_array_front_end_adds_a_sparse_vector_to_a_cscs_flatten_in_one_kernel():
    c = np.array([[0.0, 2.0], [3.0, 0.0]])
    x = np.array([1.0, 0.0, 0.0, 2.0])
    C, X = ss.Tensor.from_numpy(c, "csc"), ss.Tensor.from_numpy(x, "sparse_vector")
    for expr, want in ((xp.asarray(X) + xp.asarray(C).reshape(-1), x + c.reshape(-1)),
                       (xp.asarray(C).reshape(-1) + xp.asarray(X), c.reshape(-1) + x),
                       (xp.asarray(X) * xp.asarray(C).reshape(-1), x * c.reshape(-1))):
        kernel = ss.lower(expr, strategy="looplets")
        stages = set(kernel.trace.stages())
        assert not {"retry", "materialize", "gather"} & stages, kernel.trace
        got = kernel()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)


def test_a_sparse_vector_times_a_cscs_flatten_is_read_from_a_dense_copy():
    # (c's fill 0 annihilates, is no identity of *: x is read beside c's walk, from a dense copy of it)
    c = np.array([[0.0, 2.0], [3.0, 0.0]])
    x = np.array([inf, 0.0, 0.0, 2.0])
    C, X = ss.Tensor.from_numpy(c, "csc", name="c"), ss.Tensor.from_numpy(x, "sparse_vector", name="x")
    with np.errstate(invalid="ignore"):
        want = x * c.reshape(-1)
    kernel, _ = checked_kernel(program("*"), want, "dense", c=C, x=X)
    (copy,) = kernel.trace.find("copy")
    assert "x_dense" in copy.note and not kernel.trace.find("copy-scatter"), kernel.trace
    assert loops_of(kernel) == ["i", "k", "j", "t"], loops_of(kernel)
    body = kernel.c_source.split("int y_kernel", 1)[1]
    assert "seek" not in body and not re.search(r"x_val\[[^\]]*\*", body), body


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(m=st.integers(0, 3), n=st.integers(0, 4), density=st.sampled_from([0.0, 0.3, 1.0]),
       fill=st.sampled_from([0.0, 1.0, nan, -inf]), xfill=st.sampled_from([0.0, nan]),
       op=st.sampled_from(sorted(OPS)), flat_first=st.booleans(), xfmt=st.sampled_from(["dense", "sparse_vector"]),
       out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(m=2, n=3, density=0.3, fill=0.0, xfill=0.0, op="+", flat_first=False, xfmt="sparse_vector",
         out="sparse_vector", seed=1)                                                          # passes
@example(m=3, n=2, density=0.3, fill=0.0, xfill=nan, op="*", flat_first=True, xfmt="sparse_vector",
         out="dense", seed=2)                                                                  # a dense copy
@example(m=2, n=2, density=1.0, fill=inf, xfill=0.0, op="min", flat_first=True, xfmt="dense", out="dense",
         seed=3)                                                                               # all stored
@example(m=2, n=2, density=0.0, fill=1.0, xfill=0.0, op="*", flat_first=False, xfmt="sparse_vector",
         out="sparse_vector", seed=4)                                                          # all fill
@example(m=0, n=3, density=0.3, fill=0.0, xfill=0.0, op="-", flat_first=False, xfmt="sparse_vector",
         out="dense", seed=5)                                                                  # empty
def test_a_vector_beside_a_cscs_flatten(m, n, density, fill, xfill, op, flat_first, xfmt, out, seed,
                                        poisoned_empty):
    c = matrix((m, n), density, fill, seed)
    rng = np.random.default_rng(seed + 1)
    x = np.where(rng.random(m * n) < 0.5, rng.choice(STORED, m * n), xfill)
    C = ss.Tensor.from_numpy(c, "csc", fill=fill, name="c")
    X = ss.Tensor.from_numpy(x, xfmt, fill=xfill, name="x")
    f = OPS[op][1]
    with np.errstate(all="ignore"):
        want = f(c.reshape(-1), x) if flat_first else f(x, c.reshape(-1))
    if op == "min":   # (the notation's min propagates NaN as numpy's minimum does)
        want = np.minimum(c.reshape(-1), x) if flat_first else np.minimum(x, c.reshape(-1))
    kernel, _ = checked_kernel(program(op, flat_first), want, out, c=C, x=X)
    assert not kernel.trace.find("gather"), kernel.trace
    # (the passes exactly where c's fill is the operator's identity and x comes first or it commutes)
    passes = OPS[op][2] == fill and (not flat_first or op != "-")
    assert bool(kernel.trace.find("copy-scatter")) == passes, kernel.trace
    # (a dense output the copy writes whole is left unfilled before the call; np.empty poisoned shows a gap)
    assert (kernel.lowered.initial == "none") == (passes and out == "dense"), kernel.lowered.initial


#: a flatten of a matrix ``b`` beside the CSC's, in the notation (its own indices: b's shape may differ)
BESIDE = "y[i] = {x} + collapse(c[j, k], (j, k) -> i)"
FLAT_B = "collapse(b[l, m], (l, m) -> i)"


@pytest.mark.parametrize("bfmt", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("out", ["dense", "sparse_vector"])
def test_a_matrixs_flatten_plus_a_cscs_is_copied_then_the_cscs_entries_added_in(bfmt, out, poisoned_empty):
    # (on main the two flattens of one index were refused: "collapsed twice", naming the lattice)
    c = np.array([[0.0, 2.0, 0.0], [nan, 0.0, -inf]])
    b = np.array([[1.0, 0.0], [0.0, inf], [-2.0, 0.0]])
    C, B = ss.Tensor.from_numpy(c, "csc", name="c"), ss.Tensor.from_numpy(b, bfmt, name="b")
    kernel, _ = checked_kernel(BESIDE.format(x=FLAT_B), b.reshape(-1) + c.reshape(-1), out, c=C, b=B)
    assert kernel.trace.find("copy-scatter") and not kernel.trace.find("gather"), kernel.trace
    assert kernel.lowered.initial == ("none" if out == "dense" else "fill"), kernel.lowered.initial
    # (the scatter touches c's stored entries only)
    (scatter,) = [line for line in kernel.c_source.splitlines() if "+= c_val[" in line]
    assert "* c0_size]" in scatter, scatter


def test_two_flattens_of_one_csc_and_of_two_matrices_lower_as_one_kernel():
    c = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, nan]])
    b = np.array([[1.0, 0.0], [0.0, 0.0], [-inf, 4.0]])
    C, B = ss.Tensor.from_numpy(c, "csc"), ss.Tensor.from_numpy(b, "csr")
    for expr, want in ((xp.asarray(C).reshape(-1) + xp.asarray(C).reshape(-1), c.reshape(-1) + c.reshape(-1)),
                       (xp.asarray(B).reshape(-1) + xp.asarray(C).reshape(-1), b.reshape(-1) + c.reshape(-1)),
                       (xp.asarray(C).reshape(-1) + xp.asarray(B).reshape(-1), c.reshape(-1) + b.reshape(-1))):
        kernel = ss.lower(expr, strategy="looplets")
        stages = set(kernel.trace.stages())
        assert "copy-scatter" in stages and not {"retry", "materialize", "gather"} & stages, kernel.trace
        got = kernel()
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(m=st.integers(0, 3), n=st.integers(1, 3), density=st.sampled_from([0.0, 0.3, 1.0]),
       fill=st.sampled_from([0.0, 1.0, nan, inf]), bfill=st.sampled_from([0.0, nan, -inf]),
       op=st.sampled_from(sorted(OPS)), same=st.booleans(), bfmt=st.sampled_from(["csr", "csc", "coo", "dense"]),
       out=st.sampled_from(["dense", "sparse_vector"]), seed=st.integers(0, 2 ** 16))
@example(m=2, n=3, density=0.3, fill=0.0, bfill=0.0, op="+", same=False, bfmt="csr", out="dense", seed=1)
@example(m=3, n=2, density=0.3, fill=0.0, bfill=nan, op="+", same=True, bfmt="csc", out="sparse_vector",
         seed=2)                                                                                # c's twice
@example(m=2, n=2, density=1.0, fill=inf, bfill=-inf, op="min", same=False, bfmt="coo", out="dense",
         seed=3)                                                                                # all stored
@example(m=2, n=2, density=0.0, fill=1.0, bfill=0.0, op="*", same=False, bfmt="csc", out="sparse_vector",
         seed=4)                                                                                # all fill
@example(m=0, n=3, density=0.3, fill=0.0, bfill=0.0, op="-", same=False, bfmt="dense", out="dense",
         seed=5)                                                                                # empty
def test_a_flatten_beside_a_cscs_flatten(m, n, density, fill, bfill, op, same, bfmt, out, seed, poisoned_empty):
    c = matrix((m, n), density, fill, seed)
    b = c if same else matrix((n, m), 0.5, bfill, seed + 1)   # (b of c's transposed shape: one length flattened)
    C = ss.Tensor.from_numpy(c, "csc", fill=fill, name="c")
    tensors = {"c": C} if same else {"c": C, "b": ss.Tensor.from_numpy(b, bfmt, fill=bfill, name="b")}
    flat_b = "collapse(c[l, m], (l, m) -> i)" if same else FLAT_B
    with np.errstate(all="ignore"):
        want = np.minimum(b.reshape(-1), c.reshape(-1)) if op == "min" else OPS[op][1](b.reshape(-1), c.reshape(-1))
    prog = "y[i] = " + OPS[op][0].format(x=flat_b, c=FLAT)
    passes = OPS[op][2] == fill
    try:
        kernel, _ = checked_kernel(prog, want, out, **tensors)
    except ss.StrategyError as e:
        # (no pass can walk both flattens where c's fill is no identity of op: refused, naming the lattice)
        assert not passes and "lattice" in str(e), e
        return
    assert passes and kernel.trace.find("copy-scatter") and not kernel.trace.find("gather"), kernel.trace
    assert (kernel.lowered.initial == "none") == (out == "dense"), kernel.lowered.initial
