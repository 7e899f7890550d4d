"""A sum under an operator over both indices of a sparse matrix output (issue 30): its workspace kept in
sparse rows, not a dense array of the matrix's every entry.

``c[j, m] = sum[i](concat((A[k, j, m], A1[l, j, m]), (k, l) -> i)) * 2 + 1`` (numpy's ``sum(concat(3-D
parts), axis=0) * 2 + 1``) walks the parts' level 0 (``k``) before their rows, so its sum goes into a workspace
first (:mod:`compiler.lattice.seqworkspace`), and the statement reads it in the output's order. A dense
workspace would hold ``rows × columns`` values. So its terms are bucketed by the output's row as
:class:`~compiler.lattice.seqsumscatter.BucketedSums` buckets them (phase 1 counts each row's terms, a prefix
sum gives the rows' starts, phase 2 places each term's column and value at its row's next slot), and each row's
terms are then added into a row workspace (Gustavson's), its columns sorted and its sums written back in place
from where the row before ended: the buckets become the workspace's CSR (``w1_pos``, ``w1_idx``, ``w_val``), its
indices in the output's storage order (a CSC output's workspace is ``w[m, j]``). A summand of another fill than
0 has its fill folded in at each column a term reached; where none did, the workspace holds its fill. The
statement then reads it as a sparse input (``forall j ∈ j_w: forall m ∈ m_w: c(j, m) = w(j_w, m_w) * 2 + 1``),
its lattice walking only the stored sums where the operator of the workspace's fill is the result's fill
(``sum * 2 + 1``: 1 where no term landed, not stored), co-iterating any other operand. Memory: the terms (the
parts' entries), the rows' starts and one row; time: two passes of the sum's loops, the sorts of the rows'
columns and one walk of the sums.

>>> import numpy as np, compiler as ss
>>> A = ss.Tensor.from_numpy(np.array([[[0, 1.0], [2.0, 0]], [[0, 3.0], [0, 0]]]), "csf")
>>> k = ss.lower("c[j, m] = sum[i](slice(A[k, j, m], k -> i, (0, 2, 1))) * 2 + 1", strategy="lattice", A=A,
...              c=ss.parse_format("csr", ndim=2, fill=1.0))
>>> print(k.trace.find("cfir")[0].after_text)
while i <- k_A[0:2]
  while j <- j_A
    while m <- m_A
      w(j, m) += A(k_A, j_A, m_A)
while j <- j_w with U_j = j_w
  while m <- m_w with U_m = m_w
    c(j, m) = w(j_w, m_w) * 2 + 1
>>> k(A=A).to_coords()[1]      # (1 where no term landed: the fill, not stored)
array([9., 5.])
"""

from __future__ import annotations

import numpy as np

from ..imperative.ir import Allocate, Assign, BinOp, Comment, CompoundAssign, Const, Declare, For, Load, Store, Var
from . import seqcfir as cf
from ..stand_in import format_text
from .seqhoist import hoistable
from .seqoutput import output_kind
from .seqsumscatter import BucketedSums, bucketed, row_starts
from .seqsumsort import SortedWorkspace, extents_declared, sorts_sums
from .seqworkspace import WorkspaceCode, sums_under_operators

I64 = "int64"


def _c(n) -> Const:
    return Const(int(n), I64)


class RowBuckets(BucketedSums):
    """The code of a :class:`~compiler.lattice.seqworkspace.SumWorkspace` kept in sparse rows: its terms
    bucketed by row (:meth:`accumulate`, phases ``count`` then ``place``), then each row summed and written back
    in place, sorted (:meth:`around`): the workspace's CSR, which the statement's loops read after. ``producer``:
    the CIN of the sum's loops (a fold of another fill than 0 among them)."""

    def __init__(self, work, fmt, dtype: str, fresh, producer=None):
        super().__init__(work.name, fmt, work.shape, dtype, fresh, work.indices, producer)
        self.phase = "count"        # (a row's terms come at any point of the sum's loops)
        # (the buckets are the workspace's own arrays, named by its levels: its rows' starts, then its entries)
        self.starts, (self.terms_idx,), self.terms_val = self.pos, self.idx, self.val
        self.kept = Var(fresh("kept"))
        # (a sum over no index is its summand: a read re-sorted into rows (seqcolmajor), each coordinate placed
        # once, each row's columns in order as the loops run them outermost; the buckets are its CSR already)
        self.once = not work.total.indices

    def store(self, idxs: tuple, value) -> list:
        """The row's next entry (column and sum) written back at the workspace's next position: every
        column a term reached, as the CFIR's interpreter keeps it."""
        return [Store(self.terms_idx, self.kept, Var(self.col)), Store(self.terms_val, self.kept, value),
                CompoundAssign("+", self.kept, _c(1))]

    def wrap(self, body: list) -> list:
        """``body`` (the kernel's loops) after the workspace's extents (its arrays are allocated where the sum's
        loops run: :meth:`around`)."""
        return extents_declared(self.tensor, self.shape) + body

    def around(self, emit, rest=lambda: []) -> list:
        """The sum's loops (``emit()``) twice, counting then placing each term in its row's bucket, each row then
        summed and written back in order; ``rest()``: the code after them (the statement's loops) while the
        workspace lives."""
        first, second = self.twice(emit)
        q, total, r, p = Var(self.names("q")), Var(self.names("n_terms")), Var(self.row), Var(self.names("p"))
        lo, hi = Var(self.names("lo")), Var(self.names("hi"))
        prefix = row_starts(self.next, self.starts, self.rows, q, total)
        # (a row's sums are at most its terms: written from where the row before ended, at or before its bucket)
        rows = [Declare(self.kept, I64, _c(0)), Declare(lo, I64, _c(0)),
                For(r, 0, _c(self.rows), [
                    Declare(hi, I64, Load(self.starts, BinOp("+", r, _c(1)))),
                    Store(self.starts, r, self.kept),
                    Declare(self.n, I64, _c(0)),
                    For(p, lo, hi, [Declare(Var(self.col), I64, Load(self.terms_idx, p)),
                                    *self.add(Var(self.col), Load(self.terms_val, p))]),
                    *self.append_row(),
                    Assign(lo, hi)]),
                Store(self.starts, _c(self.rows), self.kept)]
        row = self.row
        summed = [] if self.once else [
            Comment(f"each row's terms added into a row workspace, its sums written back in order from where the row "
                    f"before ended: {self.tensor}'s rows"),
            *self.row_workspace(rows)]
        term = "entry" if self.once else "term of the sum"
        body = [Comment(f"phase 1, count: each {term} counts in {self.next}[{row}], its row's (the rows of "
                        f"{self.tensor}, a CSR over {', '.join(self.indices)})"),
                *first,
                Comment("the rows' starts (the counts summed), each row's next slot at its start"),
                *prefix,
                *self.room(total, [
                    Comment(f"phase 2, place: each {term.split()[0]}'s {self.col} and value at its row's next slot"
                            + (f" ({self.col} increasing in each row: {self.tensor}'s rows, in order)"
                               if self.once else "")),
                    *second,
                    *summed,
                    *rest()])]
        return [Allocate(self.next, I64, _c(self.rows), _c(0), [Allocate(self.starts, I64, _c(self.rows + 1), None,
                                                                          body)])]


def workspace_codes(low, work: dict, fresh) -> dict:
    """Each workspace of ``low`` (a :class:`~compiler.lattice.seqderive.SeqLowering`) -> its code: a
    :class:`RowBuckets` where it is kept in sparse rows, else a dense
    :class:`~compiler.lattice.seqworkspace.WorkspaceCode`; ``work``: each one's format (its dtype the sum's)."""
    parts = low.cin.stmts if isinstance(low.cin, cf.Block) else ()
    out = {}
    for k, w in enumerate(low.workspaces):
        fmt = work[w.name]
        dtype = np.dtype(fmt.dtype).name
        if not w.rows:
            out[w.name] = WorkspaceCode(w, fmt, dtype, fresh)
        else:
            # (the k-th part of the workspaces' CIN is the k-th one's producer: seqworkspace.workspace_body)
            kind = RowBuckets if len(w.shape) == 2 else SortedWorkspace
            out[w.name] = kind(w, fmt, dtype, fresh, parts[k] if k < len(parts) else None)
    return out


def emit_producers(em, s, consume=lambda emit: emit()) -> list:
    """The code of the CFIR ``s`` by the emitter ``em``: the loops of a sum kept in sparse rows (those
    adding into it and folding its fill in) through its :meth:`RowBuckets.around`, the statements after them
    inside it, through ``consume`` (the output's code around the loops writing it: a sorted output's two
    passes run those, not the producers', twice)."""
    stmts = list(s.stmts) if isinstance(s, cf.Block) else [s]
    for k, x in enumerate(stmts):
        code = em.workspaces.get(_into(x))
        if isinstance(code, (RowBuckets, SortedWorkspace)):
            end = k + 1
            while end < len(stmts) and _into(stmts[end]) == code.tensor:
                end += 1
            before = [y for z in stmts[:k] for y in em.stmt(z)]
            return before + code.around(lambda: [y for z in stmts[k:end] for y in em.stmt(z)],
                                        lambda: emit_producers(em, cf.Block(tuple(stmts[end:])), consume))
    return consume(lambda: [y for z in stmts for y in em.stmt(z)])


def _into(s) -> str | None:
    """The workspace the CFIR statement ``s`` adds into (its sum's loops, or the fold of its fill)."""
    if isinstance(s, (cf.Reduce, cf.Fold)):
        return s.out if s.idxs else None
    if isinstance(s, (cf.While, cf.Bind)):
        return _into(s.body)
    if isinstance(s, cf.Block):
        found = {_into(x) for x in s.stmts} - {None}
        return found.pop() if len(found) == 1 else None
    if isinstance(s, cf.Switch):
        found = {_into(b) for _, b in s.cases} - {None}
        return found.pop() if len(found) == 1 else None
    return None


def unbucketed(program, out_format) -> str:
    """Why the loops of ``program``'s sum (its right side, or one under an operator) cannot run around those
    of a sparse output of ``out_format``, which walk an input against its storage order: ``""`` where they may
    (a dense output, a vector, a CSR, CSC or COO matrix, a DCSR or a sparse output of 3 or more modes the sequence
    emitter appends to or assembles: :mod:`compiler.lattice.seqsumsort`) or there is no such sum.

    >>> from compiler.format import csf, csr, dcsr, parse_format
    >>> from compiler.notation import parse
    >>> unbucketed(parse("c[j, m] = sum[i](A[i, j, m]) * 2"), csr())
    ''
    >>> unbucketed(parse("c[j, m, n] = sum[i](A[i, j, m, n])"), csf(3)), unbucketed(parse("c[j, m] = sum[i](A[i, j, m])"), dcsr())
    ('', '')
    >>> print(unbucketed(parse("c[j, m] = sum[i](A[i, j, m])"), parse_format("SparseList(SparseHash(Element(0.0)))")))
     (the sum's loops would run around c's, but its terms are bucketed by row into a CSR, CSC or COO matrix, or sorted by key into a DCSR or a sparse output of 3 or more modes, not into c's SparseList(SparseHash(Element(0.0))): its levels are assembled otherwise, compiler.lattice.seqassembly)
    """
    names = program.lhs.indices
    if out_format is None or len(names) < 2 or output_kind(out_format) == "dense" or bucketed(out_format) \
            or sorts_sums(out_format) or not (hoistable(program) or sums_under_operators(program)):
        return ""
    out = program.lhs.tensor
    # (a matrix with a hash or a dense level under a list is not appended in place: left to looplets)
    return (f" (the sum's loops would run around {out}'s, but its terms are bucketed by row into a CSR, CSC or COO "
            f"matrix, or sorted by key into a DCSR or a sparse output of 3 or more modes, not into {out}'s "
            f"{format_text(out_format)}: its levels are assembled otherwise, compiler.lattice.seqassembly)")


__all__ = ["RowBuckets", "emit_producers", "unbucketed", "workspace_codes"]
