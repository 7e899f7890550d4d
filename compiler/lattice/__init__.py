"""Strategy A, the lattice compiler: index notation lowered the TACO way, generalized to any
operator and fill value, through CFIR to the imperative IR and C.

Pipeline, one module per stage (each step is recorded in the trace): the plan
(:mod:`~compiler.lattice.plan`: :class:`~compiler.lattice.plan.Setup`, with the statement rewrites of
:mod:`~compiler.lattice.plan_steps`, the conversions of :mod:`~compiler.lattice.conversions` and the
stand-in an output it does not assemble is built in, :mod:`~compiler.lattice.output_build`) over
:func:`~compiler.lattice.cin.concretize` (concrete index notation) and the
:class:`~compiler.lattice.iteration_graph.IterationGraph` (loop order); one
:class:`~compiler.lattice.lattice.Lattice` per forall (iteration algebra from operator properties and
fills, checked by brute-force enumeration); the CFIR (nodes in :mod:`~compiler.lattice.cfir`, built by
:mod:`~compiler.lattice.cfir_builder`, run by :mod:`~compiler.lattice.cfir_interpreter`); emission to
the imperative IR through the level iterators (:mod:`~compiler.lattice.emitter` and its ``emit_*``
modules, :mod:`~compiler.lattice.iterators`); and the driver, :mod:`~compiler.lattice.lowering`.

>>> import numpy as np
>>> from compiler import Tensor, lower
>>> A = Tensor.from_numpy(np.array([[0, 1.0], [2.0, 3.0]]), "csr")
>>> k = lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(2))
>>> k(A=A, x=np.ones(2)).to_numpy()
array([1., 5.])
"""

from .algebra import derive, holds
from . import block_iterators, point_iterators, run_iterators  # noqa: F401  (register their levels' iterators)
from .cfir_builder import build_cfir
from .cfir_interpreter import interpret_cfir
from .plan import Setup
from .cin import Assignment, Forall, Sequence, Where, concretize, scalar_promote
from .iteration_graph import IterationGraph
from .lattice import Lattice, LatticeError, build_lattice, check_lattice
from .lowering import lower_lattice
from .schedule import Schedule


def _register() -> None:
    try:
        from ..lowering import register_strategy
    except ImportError:  # the runtime is not there yet
        return
    register_strategy("lattice", lower_lattice)
    from ..capabilities import Capabilities, register_capabilities
    from ..levels.level import level_classes
    from .iterators import ITERATORS
    from .schedule import LATTICE_COMMANDS

    # read from the registries the strategy itself dispatches on, at query time; an output level
    # it does not append itself is built as a SparseList and converted (compiler.lattice.output_build);
    # an entry read at constants is located once for all its reads (compiler.lattice.seqlocated), a row at a
    # constant coordinate walked once for all its reads (compiler.lattice.seqreads); a sum whose
    # plan reads an input converted is lowered again for the tensors' shapes (compiler.lattice.bucketed_sums)
    register_capabilities("lattice", lambda: Capabilities(
        "lattice", tuple(c.name for c in ITERATORS), tuple(c.name for c in level_classes() if not c.is_leaf),
        LATTICE_COMMANDS, shares_constant_reads=True, shares_constant_fibers=True, lowers_for_shapes=True))


_register()

__all__ = ["Assignment", "Forall", "IterationGraph", "Lattice", "LatticeError", "Sequence", "Setup",
           "Where", "build_cfir", "build_lattice", "check_lattice", "concretize", "derive", "holds",
           "interpret_cfir", "lower_lattice", "scalar_promote", "Schedule"]
