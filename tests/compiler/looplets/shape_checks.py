"""What the looplets' shape-operator tests share: a kernel checked against numpy, the dense oracle
and the IR interpreter, and the array front end's one kernel."""

import numpy as np

import compiler as ss
from compiler.reference import evaluate


def checked_kernel(prog, want, out, **tensors):
    """The looplets kernel of the index notation ``prog`` writing its output in the format ``out``
    (the oracle's fill), checked against ``want``, the dense oracle and the IR interpreter;
    ``(kernel, result)``."""
    oracle, oracle_fill = evaluate(prog, **tensors)
    np.testing.assert_array_equal(oracle, want)
    output = prog.split("[", 1)[0].strip()
    kernel = ss.lower(prog, "looplets", **tensors,
                      **{output: ss.parse_format(out, ndim=want.ndim, fill=oracle_fill.item())})
    got = kernel(**tensors)
    got.validate()
    np.testing.assert_array_equal(got.to_numpy(), want)
    np.testing.assert_array_equal(kernel.interpret(**tensors).to_numpy(), want)
    return kernel, got


def one_kernel(expr):
    """The looplets kernel of the array expression ``expr``, which must be one kernel: no statement
    retried and no node materialized apart."""
    kernel = ss.lower(expr, strategy="looplets")
    stages = [s.stage for s in kernel.trace.steps]
    assert "retry" not in stages and "materialize" not in stages, kernel.trace
    return kernel
