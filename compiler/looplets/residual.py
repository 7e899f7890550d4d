"""A residual under looplets: a reduction added to the rest of its right-hand side, computed as
two loop nests when one scalar per output element would read an input out of its storage order.

``y[j] = b[j] + sum[i](A[i, j] * x[i])`` with a CSR ``A`` hoists the sum into a scalar inside
the loop over ``j`` (:mod:`.notation_program`): for each ``j`` every row of A is searched for
``j``. Since ``+`` is associative and commutative, the output may start at the rest and take the
reduction's terms one by one, in the loops' order that walks A's rows, as TACO's ``where`` and
the lattice strategy's sequence statement do::

    for j = _
      y[j] = b[j]
    for i = _
      for j = _
        y[j] += A[i, j] * x[i]

>>> from compiler.format import parse_format
>>> from compiler.notation import parse
>>> fmts = {"A": parse_format("csr"), "b": parse_format("dense", ndim=1), "x": parse_format("dense", ndim=1)}
>>> prog, note = residual_program(parse("y[j] = b[j] + A[i, j] * x[i]"), formats=fmts)
>>> print(prog)
for j = _
  y[j] = b[j]
for i = _
  for j = _
    y[j] += A[i, j] * x[i]

A difference of the rest and the reduction (a residual ``r = b - A x``) is the same sum, each
term negated (``y[j] += -(A[i, j] * x[i])``: ``y + -t`` is ``y - t`` exactly):

>>> print(residual_program(parse("r[j] = b[j] - A[i, j] * x[i]"), formats=fmts)[0])
for j = _
  r[j] = b[j]
for i = _
  for j = _
    r[j] += -(A[i, j] * x[i])

Only an output written at random (every level dense) takes the terms in any order.
"""

from __future__ import annotations

from dataclasses import replace

from ..algebra import NOVALUE, lookup, reduction_annihilator
from ..notation import ast as N
from .notation_program import notation_program
from .output_order import fewest_reads_out_of_order, reads_out_of_order, reordered
from .program import Block


def residual_program(stmt, dtype=None, formats=None):
    """``(program, note)``: ``stmt`` (``out = rest op reduce[...](...)``) as the rest assigned,
    then the reduction's terms added into the output in the loops' order that reads the fewest
    inputs out of their storage order; None where one scalar per output element is as good or
    the split does not apply (an update, a sparse output, an operator that is not associative
    and commutative, one whose reduction may stop early, a reduction binding an output's index)."""
    rhs, out = stmt.rhs, stmt.lhs.tensor
    if stmt.op is not None or not formats or not isinstance(rhs, N.Call) or len(rhs.args) != 2:
        return None
    fmt = formats.get(out)
    if fmt is not None and not all(lvl.random_write for lvl in fmt.levels):
        return None
    # (a difference is a sum: b - sum(t) starts at b and adds each -t, as y -= t would; sum(t) - b
    # starts at -b. In IEEE arithmetic y + -t is y - t exactly)
    minus = rhs.op.name == "sub"
    op = lookup("+") if minus else rhs.op
    reduces = [k for k, a in enumerate(rhs.args) if isinstance(a, N.Reduce) and a.op == op]
    if len(reduces) != 1 or not (op.commutative and op.associative) or reduction_annihilator(op) is not None \
            or op.identity is NOVALUE:
        return None
    reduce, rest = rhs.args[reduces[0]], rhs.args[1 - reduces[0]]
    if minus:
        negate = lambda e: N.Call(lookup("neg"), (e,))   # noqa: E731
        reduce, rest = (replace(reduce, body=negate(reduce.body)), rest) if reduces[0] == 1 else (reduce, negate(rest))
    if {i.name for i in reduce.indices} & {i.name for i in stmt.lhs.indices if isinstance(i, N.Index)}:
        return None   # (a reduction binding an output's index names another index: one scalar keeps them apart)
    one, hoisted = notation_program(stmt, dtype, formats)
    first, _ = notation_program(N.Assign(stmt.lhs, None, rest), dtype, formats)
    then, _ = notation_program(N.Assign(stmt.lhs, op, reduce), dtype, formats)
    if first.temporaries and then.temporaries:   # (each names its temporaries from t)
        return None
    before = reads_out_of_order(one.body, out, formats)
    order, after = fewest_reads_out_of_order(then.body, out, formats)
    if after >= before:
        return None
    nest = reordered(then.body, order)
    body = Block(tuple([*_stmts(first.body), *_stmts(nest)]))
    prog = replace(one, body=body, temporaries=first.temporaries + then.temporaries)
    spelled = ", ".join(i.name for i in order)
    note = (f"{out} starts at {rest}, then adds the terms of {reduce} in the loops {spelled} (outermost first), "
            f"reading {after} input access{'' if after == 1 else 'es'} out of their storage order ({before} "
            f"with one scalar per element of {out}: {hoisted[0].name if hoisted else 'the reduction'})")
    return prog, note


def _stmts(body) -> list:
    return list(body.stmts) if isinstance(body, Block) else [body]


__all__ = ["residual_program"]
