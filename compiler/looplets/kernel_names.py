"""The names a looplets kernel gives itself and avoids: its C name (:func:`c_name`), the names of its
parameters and of its levels' code, which fresh names avoid (:func:`reserved_names`), and which
parameters are an input's extents (:func:`is_input_size`).

>>> c_name("2-norm")
'k_2_norm'
"""

from __future__ import annotations

from ..binding import array_name


def is_input_size(pname: str, infos) -> bool:
    """Whether ``pname`` is an input tensor's extent parameter (``A1_size``), not an output's.

    >>> from types import SimpleNamespace as NS
    >>> infos = {"A": NS(role="input", ndim=2), "y": NS(role="output", ndim=1)}
    >>> is_input_size("A1_size", infos), is_input_size("y0_size", infos), is_input_size("A_val", infos)
    (True, False, False)
    """
    return any(info.role == "input" and pname in {array_name(t, m, "size") for m in range(info.ndim)}
               for t, info in infos.items())


def c_name(name: str) -> str:
    import re
    from ..imperative.ir import is_c_name
    n = re.sub(r"\W", "_", name)
    return n if is_c_name(n) else "k_" + n   # (a digit first, or a C keyword: `double`)


#: the names the strategy gives a level's counters and its writers' scratch arrays (the level's own
#: arrays are asked of it)
LEVEL_SCRATCH = ("nnz", "nblk", "nofs", "cap", "start", "lo", "hi", "tmp", "bits", "sum")


def reserved_names(infos) -> set:
    """The kernel's parameter names and the names its levels' code uses, which fresh names avoid.

    >>> from compiler.format import csr
    >>> from compiler.looplets.fibers import TensorInfo
    >>> sorted(n for n in reserved_names({"A": TensorInfo.from_format("A", csr())}) if n.startswith("A1_"))[:4]
    ['A1_bits', 'A1_cap', 'A1_hi', 'A1_idx']
    """
    out = set()
    for t, info in infos.items():
        out.add(t)
        out.update(array_name(t, m, "size") for m in range(info.ndim))
        out.add(array_name(t, None, "vals"))
        for k, lvl in enumerate(info.levels):
            kinds = {*LEVEL_SCRATCH, *lvl.array_dtypes(), *lvl.allocated_arrays(), *lvl.position_arrays()}
            out.update(array_name(t, k, kind) for kind in kinds)
    return out

