"""How far a looplets kernel writes each output and temporary: the stop of each mode a write reaches
(:func:`write_bounds`), the sizes an output or a temporary is allocated with (:func:`written_sizes`) and the
scratch arrays of the temporaries around the kernel's body (:func:`allocate_temporaries`).

>>> INSIDE
'inside'
"""

from __future__ import annotations

from ..binding import array_name
from ..imperative import ir
from ..imperative.ir import BinOp, Const, Var
from ..levels import Element
from .errors import ProgramError
from .level_writers import writer_for
from . import extents as X
from .modifiers import Offset, Permit, Protocol, Window
from .program import Access, Assign, Block, Define, Index, Loop, Sieve, TensorRef, walk


#: the reach of a write through a window of the output: within the output by construction
INSIDE = "inside"


def write_bounds(name, info, body) -> list | None:
    """``(storage mode, stop, line)`` for each mode of each write of ``name``: one more than the
    largest coordinate the write reaches (an IR expression of the loops' extents); the stop is
    None for a mode whose coordinate is not known from its loops (a scatter ``y[I[i]]``, which
    the kernel checks at each write), and the other modes of that write keep theirs: in
    ``bins[n, v] += 1``, ``n`` still reaches its loop's stop, which the call checks.

    The hstack ``D[i, j] = A[i, j]`` then ``D[i, j + 3] = A[i, j]`` writes mode 1 up to
    ``A1_size`` and ``A1_size + 3``: ``D`` needs ``max`` of them columns. A write through a
    window of the output reaches :data:`INSIDE`.
    """
    from .wrappers import static_ir
    out = []

    def reach(x, scope):
        if isinstance(x, Index):
            ext = scope.get(x)
            return None if ext is None else ext.stop
        if isinstance(x, Window):
            return INSIDE   # (its loop runs within the window, clipped to the output's size)
        if isinstance(x, (Permit, Protocol)):
            return reach(x.index, scope)
        if isinstance(x, Offset):
            stop = reach(x.index, scope)
            if stop is None or stop is INSIDE:
                return stop
            d = static_ir(x.delta)
            if d is not None:
                return X.add(stop, d)
            if isinstance(x.delta, Index) and x.delta in scope:   # i + j, j an outer loop's index
                return X.add(stop, X.sub(scope[x.delta].stop, 1))
        return None

    def visit(s, scope):
        if isinstance(s, Loop):
            visit(s.body, {**scope, s.idx: s.ext})
        elif isinstance(s, Block):
            for t in s.stmts:
                visit(t, scope)
        elif isinstance(s, (Sieve, Define)):
            visit(s.body, scope)
        elif isinstance(s, Assign) and isinstance(s.lhs.tns, TensorRef) and s.lhs.tns.name == name:
            for m, x in enumerate(s.lhs.idxs):
                out.append((m, reach(x, scope), s.line))
    visit(body, {})
    return out


def written_sizes(name, info, body, shapes, writes=None, read_sized=False) -> list:
    """The storage sizes of a written tensor: its given shape, else the largest coordinate its
    ``writes`` reach (:func:`write_bounds`), else the extents of the loops of the indices it is
    written at (an IR expression per storage mode); with ``read_sized`` (a temporary of index
    notation's shape operators, its extents checked by shape inference), else those of the loops it
    is read at."""
    if writes and shapes.get(name) is None and all(stop is not INSIDE and stop is not None for _, stop, _ in writes):
        return [X.imax(*[stop for m, stop, _ in writes if m == mode]) for mode in range(info.ndim)]
    sizes = []
    acc = next((n for n in walk(body) if isinstance(n, Access) and n.mode == "update"
                and isinstance(n.tns, TensorRef) and n.tns.name == name), None)
    if info.ndim and acc is None:
        raise ProgramError(f"{'output' if info.role == 'output' else 'temporary'} {name} is never written")
    if not info.ndim:
        return sizes
    ext_of = {n.idx: n.ext for n in walk(body) if isinstance(n, Loop)}
    from .extents import sub as xsub
    for m, x in enumerate(acc.idxs):
        if shapes.get(name) is not None:
            sizes.append(Const(shapes[name][m], "int64"))
            continue
        if not isinstance(x, Index) or x not in ext_of:
            if info.role == "temporary" and writes is None:   # (written at t + i: as far as its writes reach)
                return written_sizes(name, info, body, shapes, write_bounds(name, info, body), read_sized)
            read = next((n for n in walk(body) if isinstance(n, Access) and isinstance(n.tns, TensorRef) and
                         n.tns.name == name and all(i in ext_of for i in n.idxs)), None)
            if read_sized and read is not None:
                # (written at t + (k + j·|k|), a collapse walked minor index first: as far as a loop reads it)
                return [xsub(ext_of[i].stop, ext_of[i].start) for i in read.idxs]
            # (only a format was given for it: no loop's extent says how far the coordinate reaches)
            raise ProgramError(f"cannot size {name}: storage mode {m} is indexed by {x}, not by a loop's index; "
                               f"give {name} as a tensor or an array of the shape it has, not only its format")
        ext = ext_of[x]
        sizes.append(xsub(ext.stop, ext.start) if not (isinstance(ext.start, Const) and ext.start.value == 0)
                     else ext.stop)
    return sizes


def several_writes(name, info, body) -> list | None:
    """:func:`write_bounds` of ``name`` where more than one statement writes it (else None: sized by its one
    write's loops)."""
    bounds = write_bounds(name, info, body)
    return bounds if bounds is not None and len(bounds) > info.ndim else None


def allocate_temporaries(stmts, infos, temp_sizes, fresh) -> list:
    """Wrap the kernel body in the scratch arrays (``Allocate``) of each temporary.

    A temporary is Dense levels (values only), or one level whose writer allocates it as a
    workspace (a SparseByteMap vector: :meth:`~.level_writers.LevelWriter.allocate_workspace`).
    """
    decls = []
    for t, sizes in temp_sizes.items():
        info = infos[t]
        if not info.ndim:
            continue  # a 0-D temporary (a Scalar) lives in C locals
        decls += [ir.Declare(Var(array_name(t, m, "size")), "int64", e) for m, e in enumerate(sizes)]
        n = Const(1, "int64")
        for m in range(info.ndim):
            n = BinOp("*", n, Var(array_name(t, m, "size"))) if m else Var(array_name(t, m, "size"))
        levels = info.levels
        body = list(stmts)
        if levels and not all(lvl.located_by_coordinate for lvl in levels):
            writer = writer_for(levels[0])
            workspace = writer.allocate_workspace(t, info, n, body) if writer is not None else None
            if workspace is None:
                raise ProgramError(f"temporary {t}: the looplet strategy allocates Dense temporaries and "
                                   f"SparseByteMap vectors, not {info.format}")
            decls += workspace[0]
            body = workspace[1]
        if not isinstance(info.leaf, Element):
            raise ProgramError(f"temporary {t}: the leaf must be an Element")
        stmts = [ir.Allocate(array_name(t, None, "vals"), info.dtype, n, Const(info.fill, info.dtype), body)]
    return decls + list(stmts)
