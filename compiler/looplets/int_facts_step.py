"""The ``int-facts`` step of a looplets kernel's trace: what the lowering knew of the integers its code
computes, each fact with why it holds (:func:`record_int_facts`).

>>> KIND_NOUNS["bound"]
('bounded local', 'bounded locals')
"""

from __future__ import annotations

from collections import Counter

from ..imperative import ir
from ..imperative.ir import Var
from ..imperative.traverse import walk as ir_walk
from ..trace import Artifact


def record_int_facts(trace, facts, stmts) -> None:
    """An ``int-facts`` step: what the lowering knew of the integers its code computes (each fact
    with why it holds, :meth:`~compiler.looplets.bounds.IntFacts.records`), so a reader sees why a
    search or a cut at ``min(last, size)`` is not in the C. Only the facts about arrays and locals
    the kernel ``stmts`` still reads (a phase's stop the cleanup replaced is no longer there), and
    the positivity of a fiber's ``last`` where it reads the test standing for it."""
    nodes = list(ir_walk(tuple(stmts)))
    used = {n.name for n in nodes if isinstance(n, Var)} | {n.buffer for n in nodes if isinstance(n, (ir.Load, ir.BufferArg))}
    # (a local's positivity where the C reads what its test reads: it says why the C tests whether a
    # fiber is empty where a phase up to its last coordinate starts, and no longer reads that local)
    records = [r for r in facts.records() if r["subject"] in used or r["kind"] == "positive" and set(r["reads"]) <= used]
    if not records:
        return
    kinds = Counter(r["kind"] for r in records)
    note = ", ".join(f"{n} {KIND_NOUNS[k][n != 1]}" for k, n in kinds.items())
    text = "\n".join(f"{r['fact']}: {r['reason']}" for r in records)
    trace.record("int-facts", note=f"what the lowering knew of the kernel's integers: {note}",
                 artifacts=[Artifact("int-facts", "integer facts", text, data={"facts": records})],
                 data={"facts": records})


#: how the ``int-facts`` step's note counts each kind of fact
KIND_NOUNS = {"coordinates": ("array of stored coordinates", "arrays of stored coordinates"),
              "bound": ("bounded local", "bounded locals"), "definition": ("definition", "definitions"),
              "positive": ("local positive exactly when a test holds", "locals positive exactly when a test holds"),
              "range": ("value range", "value ranges")}
