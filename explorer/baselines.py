"""scipy's own call for a kernel, when scipy has the operation: the baseline ``--time`` and the
explorer's timing compare a kernel with.

:func:`scipy_baseline` recognizes SpMV, SpGEMM and the elementwise sum and product of two
matrices in index notation, whatever the tensors and indices are called and in either
operand order, and returns scipy's call on the same data (converted once, outside the timed
call), or ``None`` for an operation scipy does not have.

>>> import numpy as np, compiler
>>> A = compiler.Tensor.from_numpy(np.eye(3), "csr")
>>> name, call = scipy_baseline("z[r] = v[c] * M[r, c]", {"M": A, "v": np.arange(3.0)})
>>> name, call().tolist()
('scipy (M @ v)', [0.0, 1.0, 2.0])
>>> scipy_baseline("y[i] = A[i, j] * x[j] + 1", {"A": A, "x": np.ones(3)}) is None
True
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

__all__ = ["operation", "scipy_baseline"]

#: canonical index notation (tensors T0.. in order of appearance, indices I0..) -> operation
_OPERATIONS = {
    "T0[I0] = sum[I1](T1[I0, I1] * T2[I1])": ("matvec", 1, 2),
    "T0[I0] = sum[I1](T1[I1] * T2[I0, I1])": ("matvec", 2, 1),
    "T0[I0, I1] = sum[I2](T1[I0, I2] * T2[I2, I1])": ("matmul", 1, 2),
    "T0[I0, I1] = sum[I2](T1[I2, I1] * T2[I0, I2])": ("matmul", 2, 1),
    "T0[I0, I1] = T1[I0, I1] + T2[I0, I1]": ("add", 1, 2),
    "T0[I0, I1] = T1[I0, I1] * T2[I0, I1]": ("multiply", 1, 2),
}
_KEYWORDS = {"sum", "prod", "max", "min"}


def operation(program) -> tuple[str, str, str] | None:
    """``(operation, left tensor, right tensor)`` when ``program`` is one scipy has.

    >>> operation("C[i, j] = B[k, j] * A[i, k]")
    ('matmul', 'A', 'B')
    >>> operation("C[i, j] = A[k, i] * B[k, j]") is None   # A's transpose times B
    True
    """
    from compiler.notation import parse

    try:
        text = str(parse(program) if isinstance(program, str) else program)
    except Exception:   # noqa: BLE001 - not index notation: no scipy baseline
        return None
    names: dict[str, str] = {}
    tensors: list[str] = []
    counts = {"T": 0, "I": 0}

    def rename(m: re.Match) -> str:
        word = m.group(0)
        if word in _KEYWORDS:
            return word
        if word not in names:
            kind = "T" if text[m.end():m.end() + 1] == "[" else "I"
            names[word] = f"{kind}{counts[kind]}"
            counts[kind] += 1
            if kind == "T":
                tensors.append(word)
        return names[word]

    canonical = re.sub(r"\b[A-Za-z_]\w*\b", rename, text)
    found = _OPERATIONS.get(canonical)
    if found is None:
        return None
    op, left, right = found
    return op, tensors[left], tensors[right]


def scipy_baseline(program, tensors: Mapping[str, Any]) -> tuple[str, Callable[[], Any]] | None:
    """``(row name, call)`` of scipy's operation on ``tensors`` (Tensors, arrays or scipy
    matrices), or ``None`` when scipy has no such operation (or an operand is missing)."""
    import numpy as np
    import scipy.sparse as sp

    found = operation(program)
    if found is None:
        return None
    op, left, right = found
    if left not in tensors or right not in tensors:
        return None
    for v in (tensors[left], tensors[right]):   # scipy's sparse matrices are filled with zeros
        fill = 0 if isinstance(v, np.ndarray) or sp.issparse(v) else getattr(v, "fill", 0)  # (ndarray.fill is a method)
        if not np.isscalar(fill) or fill != 0:
            return None

    def matrix(v):
        if sp.issparse(v):
            return sp.csr_array(v)
        to_scipy = getattr(v, "to_scipy", None)
        return to_scipy("csr") if callable(to_scipy) else sp.csr_array(np.asarray(v))

    def dense(v):
        to_numpy = getattr(v, "to_numpy", None)
        return to_numpy() if callable(to_numpy) else (v.toarray() if sp.issparse(v) else np.asarray(v))

    a = matrix(tensors[left])
    if op == "matvec":
        x = dense(tensors[right])
        return f"scipy ({left} @ {right})", lambda: a @ x
    b = matrix(tensors[right])
    if op == "matmul":
        return f"scipy ({left} @ {right})", lambda: a @ b
    if op == "add":
        return f"scipy ({left} + {right})", lambda: a + b
    return f"scipy ({left}.multiply({right}))", lambda: a.multiply(b)
