"""What the tests of the lattice strategy's output formats share: the expressions, the fills and
the checks of a kernel against the oracle, the IR interpreter, a bounds-checked build and the
storage ``Tensor.from_numpy`` builds (tests/compiler/lattice/test_lattice_output_formats.py and
test_lattice_output_nestings.py)."""

import numpy as np

import compiler as ss
from compiler import Tensor
from compiler.levels import Element
from compiler.testing import assert_canonical, assert_same_storage, check_lowered, random_sparse


def leaf(fill=0.0):
    return Element(fill, dtype="float64")


EXPRS = {"sum": "C[i, j] = A[i, j] + B[i, j]", "product": "C[i, j] = A[i, j] * B[i, j]",
         "copy": "C[i, j] = A[i, j]", "transpose": "C[j, i] = A[i, j]", "spmm": "C[i, k] = A[i, j] * D[j, k]",
         "spmm-transposed": "C[k, i] = A[i, j] * D[j, k]"}


def expected(expr, tensors):
    want, _ = ss.evaluate(expr, **tensors)
    return want


#: the expressions (of EXPRS and EXPRS3) whose kernels the parametrized tests also build bounds-checked:
#: the sum (a union: every entry of either operand reaches the output's assembly), the reductions
#: (spmm, contract: an output entry summed over an inner loop) and the transposes (the output built
#: out of its order, a stand-in). A product's and a copy's kernels assemble the same output levels
#: with a subset of the sum's entries, and a bounds-checked build is a second lowering and C build; the
#: property tests' @example cases, products and copies among them, run under AddressSanitizer in
#: test_sanitize.py.
BOUNDS_CHECKED = frozenset({"sum", "spmm", "contract", "transpose", "spmm-transposed"})


def check(expr, out, checked=True, **tensors):
    """The kernel, its interpretation and (with ``checked``) a bounds-checked build agree with the
    oracle, and the output has the format asked, stored as Tensor.from_numpy stores it."""
    k = check_lowered(expr, out=out, checked=checked, **tensors)
    got = k(**tensors)
    assert got.format == out
    assert_canonical(got, expected(expr, tensors))
    return k


def used(expr, tensors):
    return {n: t for n, t in tensors.items() if f"{n}[" in expr}


FILLS = [0.0, 1.0, np.nan, np.inf, -np.inf]


EXPRS3 = {"sum": "C[i, j, k] = T[i, j, k] + U[i, j, k]", "product": "C[i, j, k] = T[i, j, k] * U[i, j, k]",
          "copy": "C[i, j, k] = T[i, j, k]", "contract": "C[i, j, k] = T[i, j, l] * M[l, k]"}


def assembled_natively(k, fmt, how="block of slots"):
    """The kernel built ``fmt`` itself: no conversion, and the lowering step says how."""
    assert not k.lowered.conversions and k.lowered.output_format == fmt
    assert not any(s.stage == "convert" for s in k.trace.steps)
    assert any(how in s.note for s in k.trace.steps if s.stage == "lower")


def native_result(k, fmt, want, how, tensors):
    """The kernel ``k``'s result, and the IR interpreter's, equal ``want`` (the oracle's) in the storage
    Tensor.from_numpy builds, in the format ``fmt`` the kernel assembled itself (the lowering step
    says ``how``, no convert step). Returns the kernel's result."""
    got = k(**tensors)
    assert got.format == fmt
    assert_canonical(got, want)
    interpreted = k.interpret(**tensors)
    np.testing.assert_array_equal(interpreted.to_numpy(), want)
    assert_same_storage(interpreted, got)
    assembled_natively(k, fmt, how)
    return got


def row_kept(got, row) -> bool:
    """Whether the 2-D result ``got`` stores an entry in ``row``: its outer sparse level lists the
    row (a row that cancels is dropped), or its Dense rows' fiber of it is not empty."""
    top = got.levels[0]
    if not top.full:
        return row in top.arrays()[top.crd_of(0)].tolist()
    pos = got.levels[1].arrays()["pos"]
    return pos[row + 1] > pos[row]


def lower_and_check(expr, fmt_for_fill, tensors):
    """Lower ``expr`` by lattices into the format ``fmt_for_fill(the oracle's fill)``; its result, and
    the interpreter's, equal the oracle's, valid and canonical. Returns the kernel and the format."""
    want, out_fill = ss.evaluate(expr, **tensors)
    fmt = fmt_for_fill(float(out_fill))
    k = ss.lower(expr, strategy="lattice", **{expr.split("[")[0]: fmt}, **tensors)
    got = k(**tensors)
    assert got.format == fmt
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(k.interpret(**tensors).to_numpy(), want)
    got.validate()
    assert_canonical(got, want)
    return k, fmt


def run_blocks(expr, fmt, tensors, how="block of slots"):
    assembled_natively(*lower_and_check(expr, fmt, tensors), how)


def runs_inputs(seed, shape=(6, 7), fill=0.0, density=0.6, special=False):
    """CSR, DCSR and CSR inputs of few distinct values (so equal neighbours make runs); with
    ``special``, some stored values are NaN, inf or -inf."""
    rng = np.random.default_rng(seed)
    n, m = shape
    a, b = (random_sparse((n, m), density, rng, fill=fill, lo=1, hi=3) for _ in range(2))
    d = random_sparse((m, 3), density, rng, fill=fill, lo=1, hi=3)
    if special:
        for x in (a, b, d):
            stored = ~np.isnan(x) if np.isnan(fill) else x != fill
            x[stored & (rng.random(x.shape) < 0.3)] = rng.choice([np.nan, np.inf, -np.inf])
    return {"A": Tensor.from_numpy(a, "csr", fill=fill), "B": Tensor.from_numpy(b, "dcsr", fill=fill),
            "D": Tensor.from_numpy(d, "csr", fill=fill)}
