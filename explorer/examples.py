"""Ready-made traces for notebooks, tests and demos, built from the compiler's own pieces.

:func:`build_spmv` records a CSR SpMV "lowering" by hand: the parse of ``y[i] = A[i, j] * x[j]``,
the fiber trees of the inputs, the imperative IR written by hand, and the compiler's own ``emit-c``
and ``compile`` steps. A short trace that needs no strategy, for the explorer's first notebook and
its tests; ``compiler.lower`` makes the full ones.

>>> from explorer import explore
>>> session = explore(build_spmv)
>>> session.stages()
['parse', 'inputs', 'imperative', 'emit-c', 'compile']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import compiler as ss
from compiler.imperative.examples import csr_spmv
from compiler.trace import Trace

__all__ = ["SpMV", "build_spmv", "build_broken", "spmv_example", "spmv_trace"]

EXPRESSION = "y[i] = A[i, j] * x[j]"


@dataclass
class SpMV:
    """A CSR SpMV example: inputs, compiled kernel, and calls to time and check."""

    S: Any                      # the scipy.sparse CSR matrix
    A: ss.Tensor
    x: np.ndarray
    kernel: Any = None
    trace: Trace = field(default_factory=Trace)

    def args(self) -> dict:
        lv = self.A.levels[1]
        return dict(m=self.A.shape[0], A_pos=lv.pos, A_idx=lv.idx, A_val=self.A.vals, x=self.x)

    def run(self) -> Callable[[], np.ndarray]:
        """A zero-argument call of the compiled kernel (reusing one output buffer)."""
        args, out = self.args(), np.zeros(self.A.shape[0])
        return lambda: self.kernel(**args, y=out)["y"]

    def baselines(self) -> dict[str, Callable[[], Any]]:
        dense = self.S.toarray()
        return {"scipy": lambda: self.S @ self.x, "numpy (dense)": lambda: dense @ self.x}

    def check(self) -> bool:
        """Whether the kernel agrees with the dense reference evaluator."""
        y = self.run()()
        ref, _ = ss.evaluate(EXPRESSION, A=self.A, x=self.x)
        return bool(np.allclose(y, ref))


def spmv_example(n: int = 6, density: float = 0.3, seed: int = 0, trace: Trace | None = None) -> SpMV:
    """Build, trace and compile CSR SpMV on a random ``n x n`` matrix."""
    import scipy.sparse as sp

    trace = trace if trace is not None else Trace()
    S = sp.random(n, n, density=density, format="csr", random_state=seed, dtype=np.float64)
    A = ss.Tensor.from_scipy(S, name="A")
    x = np.random.default_rng(seed).random(n)
    ex = SpMV(S, A, x, trace=trace)
    program = ss.parse(EXPRESSION, trace=trace)
    xt = ss.Tensor.from_numpy(x, "dense", name="x")
    trace.record("inputs", before=program, after=program, note="the operands' formats as fiber trees",
                 artifacts=[ss.fiber_tree_artifact(A), ss.fiber_tree_artifact(xt)])
    fn = csr_spmv(index=A.levels[1].index_dtype.name)
    trace.record("imperative", before=program, after=fn,
                 note="CSR SpMV written by hand in the imperative IR")
    ex.kernel = ss.compile_function(fn, trace=trace)
    return ex


def build_spmv(trace: Trace) -> None:
    """A ``build(trace)`` for :func:`explorer.explore`: the SpMV steps on a 6 x 6 matrix."""
    spmv_example(trace=trace)


def spmv_trace() -> Trace:
    """The SpMV trace of :func:`build_spmv`."""
    trace = Trace()
    build_spmv(trace)
    return trace


def build_broken(trace: Trace) -> None:
    """A build that fails after two steps, as a new level format under construction would."""
    program = ss.parse(EXPRESSION, trace=trace)
    trace.record("concretize", before=program, after=program, note="nothing to concretize")
    raise ss.FormatError("level SparseBand of tensor A has no coordinate iterator (iterate)")
