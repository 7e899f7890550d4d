"""numpy's einsum subscripts (``"ij,jk->ik"``) written as index notation, so that
:func:`compiler.einsum` takes numpy's call as well as its own: each operand becomes a tensor
``T1``, ``T2``, ... read at its labels, the product of them all assigned to ``out`` at the output's
labels; a label absent from the output is summed, as ``=`` sums the indices the output lacks.

>>> from_subscripts("ij,jk->ik", (2, 2))
'out[i, k] = T1[i, j] * T2[j, k]'
>>> from_subscripts("ii", (2,))        # implicit output: the labels used once, sorted
'out[] = T1[i, i]'

numpy's einsum of bools ands its operands and ors the products (``True + True`` is ``True`` in
bool arithmetic): given the operands' dtypes, all bool, the operands are joined by ``and`` and the
labels absent from the output reduced by ``any``:

>>> from_subscripts("ij,j->i", (2, 1), ("bool", "bool"))
'out[i] = any[j](T1[i, j] and T2[j])'
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..errors import UsageError

__all__ = ["from_subscripts", "is_subscripts", "operand_names", "parse_subscripts"]


def is_subscripts(expr: str) -> bool:
    """Whether ``expr`` is numpy's subscripts rather than index notation (which reads ``A[i]``).

    >>> is_subscripts("ij,j->i"), is_subscripts("y[i] = A[i, j] * x[j]")
    (True, False)
    """
    return "[" not in expr and "=" not in expr


def operand_names(count: int) -> list[str]:
    """The tensor names :func:`from_subscripts` gives ``count`` operands.

    >>> operand_names(2)
    ['T1', 'T2']
    """
    return [f"T{k}" for k in range(1, count + 1)]


def parse_subscripts(subscripts: str, count: int) -> tuple[list[str], str]:
    """Each operand's labels and the output's of numpy's ``subscripts`` for ``count`` operands
    (implicit output: the labels used once, sorted); a clear error where numpy's would raise one.

    >>> parse_subscripts("ij,jk", 2)
    (['ij', 'jk'], 'ik')
    """
    if not isinstance(subscripts, str):
        raise UsageError("einsum: the first argument is the subscripts string, as 'ij,jk->ik'")
    spec = subscripts.replace(" ", "")
    if "." in spec:
        raise UsageError(f"einsum {subscripts!r}: '...' is not supported; name every axis")
    lhs, arrow, out = spec.partition("->")
    ins = lhs.split(",")
    if len(ins) != count:
        raise UsageError(f"einsum {subscripts!r} names {len(ins)} operand(s) but {count} are given")
    for part in ins + [out]:
        if not all(c.isalpha() for c in part):
            raise UsageError(f"einsum {subscripts!r}: subscripts are letters, not {part!r}")
    counts = Counter("".join(ins))
    if not arrow:
        out = "".join(sorted(c for c, n in counts.items() if n == 1))
    repeated = sorted(c for c, n in Counter(out).items() if n > 1)
    if repeated:
        raise UsageError(f"einsum {subscripts!r}: the output repeats {', '.join(repeated)}")
    unknown = sorted(set(out) - set(counts))
    if unknown:
        raise UsageError(f"einsum {subscripts!r}: the output's {', '.join(unknown)} labels no operand's axis")
    return ins, out


def from_subscripts(subscripts: str, ndims: tuple, dtypes=None) -> str:
    """The index notation of numpy's ``einsum(subscripts, *operands)`` for operands of ranks
    ``ndims`` and, where known, of ``dtypes`` (see the module's examples)."""
    ins, out = parse_subscripts(subscripts, len(ndims))
    for k, (labels, ndim) in enumerate(zip(ins, ndims), 1):
        if len(labels) != ndim:
            raise UsageError(f"einsum {subscripts!r}: operand {k} has {ndim} axes, and {labels!r} names "
                             f"{len(labels)}")
    reads = [f"{name}[{', '.join(labels)}]" for name, labels in zip(operand_names(len(ins)), ins)]
    boolean = dtypes is not None and all(np.dtype(d).kind == "b" for d in dtypes)
    # (the notation's * and = of bools count in int64; numpy's einsum of bools ands and ors them)
    product = (" and " if boolean else " * ").join(reads)
    summed = [c for c in dict.fromkeys("".join(ins)) if c not in out]
    if summed and boolean:
        product = f"any[{', '.join(summed)}]({product})"
    return f"out[{', '.join(out)}] = {product}"
