"""Shared checks for the peers' suites re-created as sparsescope's own tests (issue 28).

The peers' tests (TACO, Finch.jl, pydata/sparse) are expressed as data: a program in this
project's index notation, a numpy expectation, inputs and formats. :func:`check` lowers one
case by one strategy and compares the kernel's result with both oracles, the dense reference
evaluator (:func:`compiler.evaluate`) and the numpy expectation; :func:`check_refused` asserts
that a strategy refuses a case with an error that says why in the user's terms.

>>> print(taco_format("ds"))
Dense(SparseList(Element(0.0)))
"""

from __future__ import annotations

import numpy as np
import pytest

import compiler as ss
from compiler.errors import SparsescopeError

STRATEGIES = ("lattice", "looplets")

#: TACO's mode formats as this project's level names (a TACO "sparse" mode is Finch's SparseList)
TACO_LEVELS = {"d": "Dense", "s": "SparseList"}


def taco_format(modes: str, fill=0.0, dtype="float64") -> ss.Format:
    """A TACO format given as one letter per mode, ``d`` (dense) or ``s`` (sparse/compressed),
    outermost first, as the Finch levels of DESIGN.md: ``"ds"`` is CSR, ``"ss"`` DCSR.

    >>> print(taco_format("s", fill=1.0))
    SparseList(Element(1.0))
    """
    fill = np.asarray(fill).item()
    spec = f"Element({fill!r}, dtype={dtype!r})" if dtype != "float64" else f"Element({float(fill)!r})"
    for m in reversed(modes):
        spec = f"{TACO_LEVELS[m]}({spec})"
    return ss.parse_format(spec)


def as_tensor(value, fmt, name: str) -> ss.Tensor:
    """``value`` (a numpy array) stored in ``fmt``, named ``name``."""
    return ss.Tensor.from_numpy(np.asarray(value), fmt, name=name)


def _result(out) -> np.ndarray:
    return out.to_numpy() if isinstance(out, ss.Tensor) else np.asarray(out)


def check(strategy: str, program, expected, *, out=None, functions=None, options=None, **inputs):
    """Lower ``program`` by ``strategy`` for ``inputs`` (Tensors or arrays) and the output format
    ``out`` (None: the strategy's choice), call it, and compare its result with
    :func:`compiler.evaluate` and with ``expected`` (numpy's answer, computed by the test).
    Returns the kernel's result as a numpy array."""
    kw = dict(inputs)
    if out is not None:
        kw[_output_name(program, functions)] = out
    kernel = ss.lower(program, strategy=strategy, functions=functions, options=options, **kw)
    got = _result(kernel(**inputs))
    want, _ = ss.evaluate(program, functions=functions, **inputs)
    assert_same(want, expected, "the oracle disagrees with numpy")
    assert_same(got, expected, f"the {strategy} kernel")
    return got


def assert_same(got, want, what: str) -> None:
    """Equal values (NaN equal to NaN; floats to a relative 1e-12) of equal shape and kind."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    if want.dtype.kind == "f" or got.dtype.kind == "f":
        np.testing.assert_allclose(got.astype(float), want.astype(float), rtol=1e-12, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_refused(strategy: str, program, match: str, *, out=None, functions=None, options=None,
                  error=SparsescopeError, **inputs):
    """``strategy`` refuses ``program`` with ``error`` whose message matches ``match`` (a regex):
    a clear error in the user's terms, not a crash or a wrong answer."""
    kw = dict(inputs)
    if out is not None:
        kw[_output_name(program, functions)] = out
    with pytest.raises(error, match=match):
        kernel = ss.lower(program, strategy=strategy, functions=functions, options=options, **kw)
        kernel(**inputs)


def _output_name(program, functions) -> str:
    return ss.parse(program, functions).lhs.tensor if isinstance(program, str) else program.lhs.tensor
