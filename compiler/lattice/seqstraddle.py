"""A split's group straddling a concatenation's parts, and the outputs that take it (issue 30).

``split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))`` of two 3-row parts: group ``i = 1``
holds A's row 2 (``k = 0``) and B's row 0 (``k = 1``). The loops over the concatenation are fissioned,
one series per part (:func:`~compiler.lattice.seqlattice.unsupported`, ``straddle``), so the group is
visited twice: A's loop writes its part of the group, B's loop the rest. A dense output takes that
(written by position), and so does a scatter (:mod:`compiler.lattice.seqscatter`: each fiber gets its
entries in the loops' order, A's before B's, which are at greater ``k``). An output appended in the
loops' order takes it only where the group's minor index is stored right after its major one:
stored ``(i, j, k)``, A's part brings ``(1, j, 0)`` for every ``j`` before B's ``(1, 0, 1)``, out of order;
an output whose levels the lattice emission assembles (:mod:`compiler.lattice.seqassembly`: DCSR, CSF,
hashes) or whose groups are sorted (:mod:`compiler.lattice.seqgroupsort`) would append the group's
coordinate twice, or sort and append each visit's half on its own. :func:`straddle_refusal` says why;
such an output of two or three modes storing the split's major index first or second holds each group
across the parts instead (:mod:`compiler.lattice.seqstraddlesort`); any other is refused.

>>> from compiler.lattice.sequences import Level, Concat, Project
>>> from compiler.lattice.seqcfir import Forall, Block
>>> cat = Concat(Level("A", 0, "dense", 3, "m"), Level("B", 0, "dense", 3, "n"))
>>> cin = Forall("i", Project(0, cat, 2), Forall("k", Project(1, cat, 2), Block(())))
>>> straddled_groups(cin)
[('i', 'k', 3, 2)]
"""

from __future__ import annotations

from ..stand_in import fiber_word, format_text
from .seqgroupsort import foralls, loop_order
from .seqlattice import boundaries
from .seqoutput import output_kind
from .sequences import Project, walk


def straddled_groups(stmt) -> list:
    """``(major, minor, position, J)`` for each split in the CIN ``stmt`` whose groups of ``J`` straddle
    ``position``, where a concatenation's loops move on to its next part: ``major`` loops over the
    split's ``π0``, ``minor`` over its ``π1`` (None where no loop does)."""
    loops = foralls(stmt)
    found = []
    for f in loops:
        for node in walk(f.seq):
            if not (isinstance(node, Project) and node.k == 0):
                continue
            minor = next((g.index for g in loops for x in walk(g.seq)
                          if isinstance(x, Project) and x.k == 1 and x.group_key == node.group_key), None)
            found += [(f.index, minor, at, node.J) for at, _ in boundaries(node.a) if at % node.J]
    return found


def straddle_refusal(program, low, fmt) -> str | None:
    """Why the output of ``fmt`` cannot take the entries the lowering ``low`` of ``program`` writes of a
    group straddling a concatenation's parts (each part's loop writes its own part of it), or None.

    >>> from compiler import parse, parse_format
    >>> from compiler.lattice.seqderive import ShapedFormat, seq_lower
    >>> prog = parse("out[i, j, k] = split(concat((A[m, j], B[n, j]), (m, n) -> l), l -> (i:3, k:2))")
    >>> A = ShapedFormat(parse_format("dense", ndim=2), (3, 2))
    >>> coo = parse_format("coo", ndim=3, fill=0.0)
    >>> print(straddle_refusal(prog, seq_lower(prog, A=A, B=A), coo).split("; ")[1][:66])
    out is coo, and stored i, j, k, the first part's loop would append
    """
    if fmt is None or output_kind(fmt) == "dense" or low.assembly not in ("", "group-sort"):
        return None     # (written by position, or scattered; a sum's accumulation is not appended in order)
    names = [str(i) for i in program.lhs.indices]
    stored = [names[m] for m in fmt.mode_order]
    out = program.lhs.tensor
    for major, minor, at, J in straddled_groups(low.cin):
        if major not in stored or minor not in stored:
            continue
        order = [i for i in loop_order(low.cin) if i in stored]
        if low.assembly == "group-sort" and (len(order) == 2 or order.index(order[-3]) < order.index(major)):
            # (no loop around the two: all the entries are sorted at once, SortedOutput; or the group's loop
            # runs around both parts' loops)
            continue
        if low.assembly == "group-sort":
            how = "its groups sorted, each part's loop would sort and append its own half of the group"
        elif output_kind(fmt) is None:
            how = (f"its levels assembled in order, each part's loop would append the group's coordinate "
                   f"{major} anew")
        elif stored.index(minor) == stored.index(major) + 1:
            continue    # (A's part of the group comes first in the storage order: its minor coordinates are less)
        else:
            between = stored[stored.index(major) + 1:stored.index(minor)] if stored.index(minor) > \
                stored.index(major) else stored[stored.index(minor):stored.index(major)]
            how = (f"stored {', '.join(stored)}, the first part's loop would append its part of the group at "
                   f"every {', '.join(between)} before the second part's")
        return (f"{program}: the groups of {J} of {major}'s split straddle position {at}, where the "
                f"concatenation moves on to its next part, whose loop writes the rest of the group; {out} is "
                f"{format_text(fmt)}, and {how} (a dense output, {minor} stored right after {major} in a "
                f"CSR, CSC or COO-like output, a sparse output of two or three modes storing {major} first or "
                f"second, or one of three modes or more whose modes after the first span at most 2**62 coordinates, "
                f"its every entry sorted, takes it)")
    return None


def straddle_scatter_note(out: str, fmt, why: str, order: list) -> str:
    """What the trace's ``loop-order`` step says of an output refused a straddling group in the loops' order
    (``why``) and built by a scatter instead, its loops running ``order`` (mode numbers).

    >>> from compiler.format import parse_format
    >>> print(straddle_scatter_note("c", parse_format("csc", ndim=2), "c[i, k] = ...: the groups ...", [0, 1]))
    c[i, k] = ...: the groups ...; c, csc, is built by a scatter instead, its loops running modes 0, 1: phase 1 counts each column's entries, a prefix sum gives their starts, phase 2 stores each entry at its column's next slot, the first part's half of a straddling group before the second's, in order
    """
    word = fiber_word(fmt)
    return (f"{why}; {out}, {format_text(fmt)}, is built by a scatter instead, its loops running modes "
            f"{', '.join(map(str, order))}: phase 1 counts each {word}'s entries, a prefix sum gives their starts, "
            f"phase 2 stores each entry at its {word}'s next slot, the first part's half of a straddling group "
            f"before the second's, in order")


__all__ = ["straddle_refusal", "straddle_scatter_note", "straddled_groups"]
