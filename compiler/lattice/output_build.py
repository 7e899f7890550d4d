"""Which output levels the lattice strategy assembles itself, and the stand-in it builds for the rest.

The lattice emission assembles an output level in one of two ways (TACO's level functions):
a level with a slot per coordinate under such levels (Dense) is *located*, its position
computed from its parent's; so is one under an appended level when it declares it
(``locates_under_appended``: TACO's ``{sparse, dense}``, a SparseList of Dense rows), each
appended position getting a block of slots; a level that keeps its keys in a table (SparseHash,
the table built at the end, innermost or over Dense levels) and one that marks its slots (SparseByteMap, its entries
stored and marked in their slots) or stores a band or blocks per fiber (SparseBand,
SparseBlockList), innermost or over Dense levels only (each position it keeps a block of their
slots: :mod:`compiler.lattice.emit_blocks`), are appended in order under Dense levels, a
SparseList or a SparseHash, a band's gaps filled, a block list's starting blocks
(:func:`appended_under`); one that declares it is appended as runs (``appends_runs``: RunList,
SparseRunList), an entry extending its fiber's last run or starting one
(:mod:`compiler.lattice.emit_run_output`), or as a list (``appends_coordinates``: SparsePoint,
its output checked after each call), innermost there too (under an appended level, a fiber's
runs closed as its parent keeps it), and one that does not cover its fibers above other levels
too, as a SparseList, each coordinate its own run (:func:`appends_entries`; a RunList too as the
outermost level over such a level or Dense ones, its gaps runs of the fill: :func:`covers_above`), and a band or block level above
one appended so, a fiber of it per position (:func:`ranges_above`);
a level placed or appended as it stands (:func:`placed_or_appended`)
that is not full (SparseList, or SparseCOO as the only level) is *appended* in storage order;
a level that marks its slots (SparseByteMap) under located levels only may have a level
appended as a SparseList, or a hash, band, block or byte map level, below it, a fiber per slot
(:func:`slots_located`, :func:`in_slots`). Any
other level (a RunList above another but outermost over a list or Dense levels, a byte map above a RunList or
under a sparse level with one below, a band or block level above a
sparse one other than those, a Dense level under a sparse one in a two-phase kernel under a level other
than a SparseList or a hash under Dense ones, unless between two such levels (rows of fibers:
:func:`two_phase_rows`; on threads, a SparseList and a SparseList only), a byte map under such rows in a
two-phase kernel, and on threads a byte map or hash under a SparseList that is
not outermost, or blocks under more than one sparse level but an outermost SparseList's) is built as a
SparseList holding the same coordinates (:func:`compiler.stand_in.stand_in`), and the call converts the result to the
format asked (``Tensor.asformat``). The plan records the choice as a ``convert`` step, with
the conversions of :mod:`compiler.lattice.conversions`.

>>> from compiler.format import parse_format
>>> built, why = building_output(parse_format("SparseBand(SparseHash(Element(0.0)))"), "C")
>>> print(built)
SparseList(SparseHash(Element(0.0)))
>>> print(why)
the lattice strategy assembles no level 0 (SparseBand) in C: it places Dense levels by position under Dense levels (and under a SparseList, SparsePoint, SparseRunList, SparseInterval, SparseByteMap, SparseBand, SparseBlockList or SparseHash level when only Dense levels follow, or under a SparseList, SparsePoint, SparseRunList, SparseInterval or SparseHash level when a SparseList, a SparseHash or an innermost SparseByteMap follows them), and appends sorted lists of coordinates (SparseList, a SparseHash under Dense levels, a SparseList or a SparseHash, innermost or over Dense levels, a SparseByteMap, SparseBand or SparseBlockList there, innermost or over Dense levels, a SparsePoint there, or SparseCOO as the only level) and runs (a RunList, SparseRunList or SparseInterval innermost there; a SparseRunList or SparseInterval above other levels, each coordinate its own run, and a RunList so as the outermost level over a SparseList or Dense levels, its gaps runs of the fill; a SparseByteMap under Dense levels over one of those, a SparseList or a level appended as above, a fiber per slot; a SparseBand or SparseBlockList over one of those or a SparseList, a fiber per position) in storage order, so it builds that level as a SparseList
>>> building_output(parse_format("SparseBand(SparseList(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("dcsr"), "C") is None
True
>>> building_output(parse_format("SparseList(Dense(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseByteMap(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseHash(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("SparseHash(Dense(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(RunList(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseBand(Element(0.0)))"), "C") is None
True
>>> building_output(parse_format("Dense(SparseByteMap(Dense(Element(0.0))))"), "C") is None
True
>>> building_output(parse_format("SparseList(RunList(Element(0.0)))"), "C") is None
True

A two-phase kernel, on threads too (``parallelize``), under any schedule whose loops run in the
output's storage order:

>>> building_output(parse_format("SparseList(Dense(Element(0.0)))"), "C", False, two_phase=True, threaded=True) is None
True
>>> building_output(parse_format("Dense(SparseHash(Element(0.0)))"), "C", False, two_phase=True, threaded=True) is None
True
>>> building_output(parse_format("SparseHash(Dense(Element(0.0)))"), "C", False, two_phase=True, threaded=True) is None
True
>>> building_output(parse_format("SparseList(SparseByteMap(Element(0.0)))"), "C", False, two_phase=True) is None
True
>>> building_output(parse_format("SparseList(SparseHash(Element(0.0)))"), "C", False, True, True) is None
True
>>> print(building_output(parse_format("Dense(SparseList(SparseHash(Element(0.0))))"), "C", False, True, True)[0])
Dense(SparseList(SparseList(Element(0.0))))
>>> building_output(parse_format("Dense(Dense(SparseByteMap(Element(0.0))))"), "C", False, True, True) is None
True
>>> building_output(parse_format("SparseList(SparseList(Dense(Element(0.0))))"), "C", False, True, True) is None
True
"""

from __future__ import annotations

from ..format import Format
from ..stand_in import building


def placed_or_appended(lvl) -> bool:
    """Whether output level ``lvl`` is one the lattice strategy places by position or appends as
    it stands (TACO's dense and compressed levels, and COO's list of tuples): located by coordinate
    (Dense), appended under any parent (SparseList) or a list of coordinate tuples (SparseCOO). It
    asks the level, so a subclass, or a format of its own that declares the same, is assembled alike.

    >>> from compiler.levels import Element, SparseCOO, SparseList, SparsePoint
    >>> [placed_or_appended(c(Element(0.0))) for c in (SparseList, SparsePoint)], placed_or_appended(SparseCOO(2, Element(0.0)))
    ([True, False], True)
    """
    return lvl.located_by_coordinate or lvl.appends_nested or lvl.coordinate_list


def assembles(levels: tuple, k: int, one_pass: bool = True, two_phase: bool = False, threaded: bool = False) -> bool:
    """Whether the lattice emission assembles output level ``k`` of ``levels`` (outermost first)
    itself: a registered level, full (located) under full levels; a full level that declares it
    is located under an appended parent (``locates_under_appended``: Dense, TACO's ``{sparse,
    dense}``) under a level that appends, with only such levels below it, in a one-pass kernel
    (``one_pass``; a two-phase kernel places them as said below), and so are Dense levels between
    such a level and a SparseList below them, a row of their slots per position
    (:func:`rows_of_fibers`; in a two-phase kernel too, :func:`two_phase_rows`); a sparse level that appends
    under any parent (a SparseList's fiber starts where the one before it ended), and any other
    (a SparseCOO's one segment) only as the output's one level; a level that marks its slots
    (``marks_slots``: SparseByteMap) or stores a band or blocks per fiber as the innermost level
    or over Dense levels only (:func:`blocks_below`; the Dense levels then under :func:`holds_blocks`),
    and one that keeps its keys in a table (``keys_in_table``: SparseHash) at any level (over Dense
    levels, each entry gets a block of them too), each where
    :func:`appended_under` says; one appended as runs (``appends_runs``: RunList, SparseRunList) or
    as a list (``appends_coordinates``: SparsePoint) as the innermost level, there too; each in
    a one-pass kernel. A two-phase kernel (``two_phase``, with ``one_pass`` false; any schedule
    whose loops run in the output's storage order) also places Dense levels in a block per
    position of a parent appended under any parent (a SparseList: phase 1 appends the coordinate,
    phase 2 fills its block) and marks the slots of a level that marks them as the innermost level
    under located ones (phase 1 lists and marks the coordinates, phase 2 stores the values in
    their slots), and so a level that keeps its keys in a table (its table built after the
    compaction; over blocks of Dense slots too), both also as the innermost level under a SparseList
    (:func:`under_lists`): :func:`two_phase_blocks`, :func:`two_phase_slots`, :func:`two_phase_keys`. On
    threads (``threaded``: each fiber counts its entries, then stores them from its start), the
    blocks' level is the only sparse one, under Dense levels only, or under an outermost SparseList
    (:func:`rows_of_blocks`), and a byte map or hash is under Dense levels only (:func:`on_fibers`) or
    innermost under an outermost SparseList (a DCSR's rows, each row an entry of it until the compaction).

    >>> from compiler.levels import Dense, Element, SparseList
    >>> rows = (SparseList(Element(0.0)), Dense(Element(0.0)))
    >>> assembles(rows, 1), assembles(rows, 1, one_pass=False), assembles(rows, 1, False, two_phase=True)
    (True, False, True)
    >>> fibers = SparseList(Dense(SparseList(Element(0.0))))
    >>> assembles((fibers, fibers.child, fibers.child.child), 1), assembles((fibers, fibers.child, fibers.child.child), 1, False, True)
    (True, True)
    >>> lists = SparseList(SparseList(Dense(Element(0.0))))
    >>> assembles((lists, lists.child, lists.child.child), 2, False, True, threaded=True)
    True
    >>> deep = Dense(SparseList(SparseList(Dense(Element(0.0)))))
    >>> assembles((deep, deep.child, deep.child.child, deep.child.child.child), 3, False, True, threaded=True)
    False
    """
    lvl = levels[k]
    if lvl.appends_band is not None or lvl.appends_blocks is not None:
        # (innermost or over blocks of Dense slots, or over a level appended as a SparseList, a
        # fiber of it per position: :func:`ranges_above`)
        return one_pass and (blocks_below(levels, k) or ranges_above(levels, k + 1)) and appended_under(levels, k)
    if lvl.keys_in_table is not None:
        # (under Dense levels under an appended one, a row of their slots per entry, each slot a fiber of keys;
        # or over such levels, each entry a row of fibers)
        rows = k > 0 and rows_of_fibers(levels, k - 1)
        over_rows = k + 1 < len(levels) and rows_of_fibers(levels, k + 1)
        return (one_pass and (appended_under(levels, k) or rows)) or (two_phase and two_phase_keys(levels, k, threaded)) \
            or (rows or over_rows) and two_phase_rows(levels, two_phase, threaded)
    if not placed_or_appended(lvl):
        if lvl.appends_coordinates or lvl.appends_runs:
            # (appended as a list or as runs: the innermost level, under located or appended ones;
            # above other levels, each coordinate kept its own entry or run [i, i + 1))
            return one_pass and (k == len(levels) - 1 or appends_entries(lvl) or covers_above(levels, k)) \
                and appended_under(levels, k)
        # (appended, marked and stored in its slot: innermost, or over blocks of Dense slots, or
        # under located levels over a level appended as a SparseList, a fiber per slot)
        if two_phase and two_phase_slots(levels, k, threaded):
            return True
        return one_pass and lvl.marks_slots and (appended_under(levels, k) and (
            blocks_below(levels, k) or in_slots(levels, k + 1)) or k > 0 and rows_of_fibers(levels, k - 1))
    if lvl.full:
        if all(above.full for above in levels[:k]):
            return True
        parent = next(above for above in reversed(levels[:k]) if not above.full)
        if two_phase and two_phase_blocks(levels, k) and (not threaded or rows_of_blocks(levels)):
            return True
        return (one_pass and all(x.full and x.locates_under_appended for x in levels[k:]) and holds_blocks(parent)
                or (one_pass or two_phase_rows(levels, two_phase, threaded)) and rows_of_fibers(levels, k))
    return lvl.appends_nested or len(levels) == 1


def rows_of_fibers(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is one of the Dense levels (``locates_under_appended``)
    between a level appended as a SparseList (:func:`appends_entries`) or a hash, and a SparseList
    (``appends_nested``) or a hash (``keys_in_table``, each key its slot times the size plus the
    coordinate) below them: each entry the upper level appends gets a row of their slots,
    ``parent * size + i`` (its position is its counter while its fiber is appended), each slot a
    fiber of the level below, empty until appended into (:mod:`compiler.lattice.emit_blocks`).

    >>> from compiler.levels import Dense, Element, RunList, SparseHash, SparseList
    >>> rows = SparseList(Dense(SparseList(Element(0.0))))
    >>> rows_of_fibers((rows, rows.child, rows.child.child), 1)
    True
    >>> keyed = SparseHash(Dense(Dense(SparseList(Element(0.0)))))
    >>> rows_of_fibers((keyed, keyed.child, keyed.child.child, keyed.child.child.child), 2)
    True
    >>> hashed = SparseList(Dense(SparseHash(Element(0.0))))
    >>> rows_of_fibers((hashed, hashed.child, hashed.child.child), 1)
    True
    >>> runs = RunList(Dense(SparseList(Element(0.0))))
    >>> rows_of_fibers((runs, runs.child, runs.child.child), 1)
    False
    >>> blocks = SparseList(Dense(Element(0.0)))
    >>> rows_of_fibers((blocks, blocks.child), 1)
    False
    """
    if not levels[k].located_by_coordinate:
        return False
    first, last = k, k
    while first > 0 and levels[first - 1].located_by_coordinate:
        first -= 1
    while last < len(levels) and levels[last].located_by_coordinate:
        last += 1
    if first == 0 or last == len(levels):
        return False
    parent, child = levels[first - 1], levels[last]
    return (all(x.full and x.locates_under_appended and x.nmodes == 1 for x in levels[first:last])
            and (appends_entries(parent) or parent.keys_in_table is not None) and parent.nmodes == 1
            and (child.appends_nested and child.appends_coordinates or child.keys_in_table is not None
                 or child.marks_slots and last == len(levels) - 1)
            and child.nmodes == 1)


def two_phase_rows(levels: tuple, two_phase: bool, threaded: bool) -> bool:
    """Whether a two-phase kernel (``two_phase``) assembles the rows of fibers of ``levels``
    (:func:`rows_of_fibers`): sequentially, phase 1 appends the coordinates as a one-pass kernel
    does, a row of fibers per entry of the upper level, phase 2 the values, and the compaction drops
    the entries at the fill, then the upper entries whose row of fibers became empty, their row moving
    with them; on threads (``threaded``), when the sparse levels are SparseLists under Dense levels
    only (:func:`listed_after_threads`): the upper one is filled as a Dense level, a row of fibers per
    coordinate, and listed after.

    >>> from compiler.levels import Dense, Element, SparseHash, SparseList
    >>> rows = SparseList(Dense(SparseList(Element(0.0))))
    >>> two_phase_rows((rows, rows.child, rows.child.child), True, False)
    True
    >>> two_phase_rows((rows, rows.child, rows.child.child), True, True)
    True
    >>> keyed = SparseHash(Dense(SparseList(Element(0.0))))
    >>> two_phase_rows((keyed, keyed.child, keyed.child.child), True, True)
    False
    """
    return two_phase and (not threaded or listed_after_threads(levels) is not None)


def two_phase_blocks(levels: tuple, k: int) -> bool:
    """Whether a two-phase kernel places level ``k`` of ``levels`` in a block of slots per position
    of the sparse level above it: the levels below that one are Dense (``locates_under_appended``)
    and it is appended under any parent (``appends_nested``: a SparseList), so phase 1 counts a
    block as one entry of it and phase 2 fills the block's slots.

    >>> from compiler.levels import Dense, Element, SparseHash, SparseList
    >>> block = Dense(Element(0.0))
    >>> two_phase_blocks((SparseList(block), block), 1), two_phase_blocks((SparseHash(block), block), 1)
    (True, True)
    >>> keyed = SparseList(SparseHash(block))
    >>> two_phase_blocks((keyed, keyed.child, block), 2)
    False
    >>> rows = SparseList(Dense(block))
    >>> two_phase_blocks((rows, rows.child, block), 2)
    True
    """
    sparse = [q for q in range(k) if not levels[q].full]
    if not sparse or not blocks_below(levels, sparse[-1]):
        return False
    # (a level that keeps its keys counts its blocks as a SparseList does, under located levels:
    # its keys are its coordinates there, so the compaction moves them as it is; its table is
    # built after it)
    holder = levels[sparse[-1]]
    return holder.appends_nested or (holder.keys_in_table is not None and
                                     all(x.located_by_coordinate for x in levels[:sparse[-1]]))


def two_phase_keys(levels: tuple, k: int, threaded: bool = False) -> bool:
    """Whether a two-phase kernel assembles level ``k`` of ``levels``, one that keeps its keys in a
    table (SparseHash), under levels located by coordinate, innermost or over Dense levels (a block
    of their slots per entry, :func:`two_phase_blocks`): phase 1 appends the coordinates and their
    keys, phase 2 the values, and the table is built after the compaction drops the entries at the
    fill (or whose block holds only the fill).

    >>> from compiler.levels import Dense, Element, SparseHash, SparseList
    >>> h = SparseHash(Element(0.0))
    >>> two_phase_keys((Dense(h), h), 1), two_phase_keys((SparseList(h), h), 1)
    (True, True)
    >>> two_phase_keys((SparseList(h), h), 1, threaded=True)   # (each row an entry until compacted)
    True
    >>> rows = SparseHash(Dense(Element(0.0)))
    >>> two_phase_keys((rows, rows.child), 0)
    True
    """
    if k == len(levels) - 1 and under_lists(levels, k) and (not threaded or k == 1):
        return True
    return blocks_below(levels, k) and on_fibers(levels, k)


def under_lists(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is under a level appended under any parent (a SparseList),
    itself under Dense levels or such levels only: a two-phase kernel's compaction drops that
    parent's entries whose fiber became empty, so the slots or keys ``parent * size + i`` of level
    ``k`` follow their parent's new position after it (moved, or computed again).

    >>> from compiler.levels import Dense, Element, SparseByteMap, SparseList
    >>> bm = SparseByteMap(Element(0.0))
    >>> under_lists((SparseList(bm), bm), 1), under_lists((Dense(bm), bm), 1), under_lists((bm,), 0)
    (True, False, False)
    """
    return k > 0 and levels[k - 1].appends_nested and all(x.located_by_coordinate or x.appends_nested
                                                           for x in levels[:k])


def two_phase_slots(levels: tuple, k: int, threaded: bool = False) -> bool:
    """Whether a two-phase kernel assembles level ``k`` of ``levels``, one that marks its slots
    (SparseByteMap), as the innermost level under levels located by coordinate: its slots exist
    before the loops, so phase 1 lists and marks the coordinates and phase 2 stores the values.

    >>> from compiler.levels import Dense, Element, SparseByteMap, SparseList
    >>> bm = SparseByteMap(Element(0.0))
    >>> two_phase_slots((Dense(bm), bm), 1), two_phase_slots((SparseList(bm), bm), 1)
    (True, True)
    >>> two_phase_slots((SparseList(bm), bm), 1, threaded=True)   # (each row an entry until compacted)
    True
    """
    if k == len(levels) - 1 and levels[k].marks_slots and under_lists(levels, k) and (not threaded or k == 1):
        return True
    return k == len(levels) - 1 and slots_located(levels, k)


def rows_of_blocks(levels: tuple) -> bool:
    """Whether a two-phase kernel on threads assembles ``levels``, blocks of Dense slots under a
    sparse level (:func:`two_phase_blocks`): that level is the only sparse one, under Dense levels
    only (:func:`on_fibers`: outermost, each coordinate a row of at most one block; under Dense
    levels, a fiber of blocks per position of theirs), or it is under one SparseList that is
    outermost (counted by row as a DCSR's rows, its empty rows dropped after), so phase 1 counts each
    fiber's blocks and phase 2 fills them from the fiber's start.

    >>> from compiler.levels import Dense, Element, SparseList
    >>> block = Dense(Element(0.0))
    >>> rows_of_blocks((SparseList(block), block)), rows_of_blocks((Dense(SparseList(block)), SparseList(block), block))
    (True, True)
    >>> rows = SparseList(SparseList(block))
    >>> rows_of_blocks((rows, rows.child, block))
    True
    >>> deep = Dense(SparseList(SparseList(block)))
    >>> rows_of_blocks((deep, deep.child, deep.child.child, block))
    False
    """
    sparse = [q for q in range(len(levels)) if not levels[q].full]
    return sparse == [0, 1] or len(sparse) == 1 and on_fibers(levels, sparse[0])


def listed_after_threads(levels: tuple) -> int | None:
    """The first level ``k`` a two-phase kernel on threads fills as a Dense level and lists after, or
    None: SparseList levels (each of one mode, appending sorted coordinates) under Dense levels only,
    two or more of them (``Dense(SparseList(SparseList))``, CSF rows) or three or more outermost
    (``SparseList(SparseList(SparseList))``, CSF; a DCSR's rows are counted by row number instead),
    or two with Dense levels between the innermost and the one above it (``SparseList(Dense(SparseList))``,
    a row of fibers per coordinate above: :func:`rows_of_fibers`). On the threads every coordinate of the lists above the innermost one is an entry (a fiber of the
    innermost list per position ``i * n + j``, counted and filled by its own row as under Dense
    levels: :func:`on_fibers`); a sequential pass then keeps, bottom-up, the coordinates whose fiber
    got entries, as the compaction of a DCSR's rows keeps its non-empty rows.

    >>> from compiler.levels import Dense, Element, SparseList
    >>> csf_rows = Dense(SparseList(SparseList(Element(0.0))))
    >>> listed_after_threads((csf_rows, csf_rows.child, csf_rows.child.child))
    1
    >>> csf = SparseList(SparseList(SparseList(Element(0.0))))
    >>> listed_after_threads((csf, csf.child, csf.child.child))
    0
    >>> dcsr = SparseList(SparseList(Element(0.0)))
    >>> listed_after_threads((dcsr, dcsr.child)) is None
    True
    >>> rows = SparseList(Dense(SparseList(Element(0.0))))   # (a row of fibers per coordinate of level 0)
    >>> listed_after_threads((rows, rows.child, rows.child.child))
    0
    """
    k = 0
    while k < len(levels) and levels[k].located_by_coordinate:
        k += 1
    lists = [q for q in range(k, len(levels)) if not levels[q].located_by_coordinate]
    rows = [q for q in range(k, len(levels)) if levels[q].located_by_coordinate]
    if len(lists) < 2 or (k == 0 and len(lists) == 2 and not rows) or any(lvl.nmodes != 1 for lvl in levels):
        return None
    # (Dense levels only between the innermost list and the one above it: a row of its fibers each)
    if not all(lists[-2] < q and rows_of_fibers(levels, q) for q in rows):
        return None
    if all(levels[q].appends_coordinates and levels[q].appends_nested and not levels[q].at_most_one for q in lists):
        return k
    return None


def on_fibers(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is under levels located by coordinate only (Dense), so a
    two-phase kernel on threads assembles it fiber by fiber: the fibers of row ``i`` of the parallel
    loop are the positions ``i * n + j`` of the Dense levels above (one, ``i``, under one of them;
    the level's coordinates rows of at most one entry each when it is outermost), each fiber's
    slots ``(i * n + j) * size + k`` (or keys) its own, and the thread that runs row ``i`` writes
    them alone: phase 1 counts each fiber's entries, phase 2 stores them from the fiber's start.

    >>> from compiler.levels import Dense, Element, SparseByteMap, SparseList
    >>> bm = SparseByteMap(Element(0.0))
    >>> on_fibers((Dense(Dense(bm)), Dense(bm), bm), 2), on_fibers((SparseList(bm), bm), 1)
    (True, False)
    """
    return all(above.located_by_coordinate for above in levels[:k])


def appends_entries(lvl) -> bool:
    """Whether the lattice emission appends ``lvl`` above other levels as a SparseList, one entry
    (its counter the child's position) per coordinate whose fiber below got entries: a level that
    appends coordinates (SparseList, SparsePoint) or runs without covering its fibers
    (SparseRunList, SparseInterval: each coordinate kept its own run ``[i, i + 1)``, as
    ``Tensor.from_numpy`` stores runs of anything but values). A covering run-length level (RunList)
    would need a run of the fill, with an empty fiber below, over each gap.

    >>> from compiler.levels import Element, RunList, SparseInterval
    >>> appends_entries(SparseInterval(Element(0.0))), appends_entries(RunList(Element(0.0)))
    (True, False)
    """
    return not lvl.full and (lvl.appends_coordinates or lvl.appends_runs)


def holds_blocks(lvl) -> bool:
    """Whether the lattice emission gives each position ``lvl`` appends (or marks) a block of the
    Dense slots under it (:mod:`compiler.lattice.emit_blocks`): a level appended under any parent
    (SparseList), one that marks its slots (SparseByteMap), stores a band (SparseBand) or blocks
    (SparseBlockList), or keeps its keys in a table (SparseHash: its entry's child is its position),
    and one appended as a SparseList is above other levels (:func:`appends_entries`).

    >>> from compiler.levels import Element, RunList, SparseBand, SparseHash, SparseRunList
    >>> holds_blocks(SparseBand(Element(0.0))), holds_blocks(SparseHash(Element(0.0)))
    (True, True)
    >>> holds_blocks(SparseRunList(Element(0.0))), holds_blocks(RunList(Element(0.0)))
    (True, False)
    """
    return (appends_entries(lvl) or lvl.marks_slots or lvl.keys_in_table is not None
            or lvl.appends_band is not None or lvl.appends_blocks is not None)


def blocks_below(levels: tuple, k: int) -> bool:
    """Whether level ``k`` is innermost, or has only Dense levels below it (located in a block
    per position it keeps: ``locates_under_appended``)."""
    return all(x.full and x.locates_under_appended for x in levels[k + 1:])


def covers_above(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is a run-length level that covers its fibers (RunList) as
    the outermost level over a level appended as a SparseList, or over Dense levels only: the
    kernel appends it as a SparseList too, each coordinate kept its own run, and a run of the fill
    over each gap between them and after the last, over an empty fiber below or a block of the
    fill (the storage ``Tensor.from_numpy`` builds).

    >>> from compiler.levels import Dense, Element, RunList, SparseList
    >>> rows = RunList(SparseList(Element(0.0)))
    >>> covers_above((rows, rows.child), 0), covers_above((Dense(rows), rows, rows.child), 1)
    (True, False)
    >>> blocks = RunList(Dense(Element(0.0)))
    >>> covers_above((blocks, blocks.child), 0)
    True
    """
    lvl = levels[k]
    return (k == 0 and lvl.appends_runs and lvl.full and k + 1 < len(levels)
            and (appends_entries(levels[k + 1]) or blocks_below(levels, k)))


def ranges_above(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is appended as a SparseList is (:func:`appends_entries`)
    under a level that stores a band or blocks of coordinates per fiber (SparseBand,
    SparseBlockList): each position of the band or blocks holds a fiber of level ``k``, empty in
    a band's gaps (the storage ``Tensor.from_numpy`` builds).

    >>> from compiler.levels import Element, SparseBand, SparseBlockList, SparseHash, SparseList
    >>> rows = SparseList(Element(0.0))
    >>> ranges_above((SparseBand(rows), rows), 1), ranges_above((SparseBlockList(rows), rows), 1)
    (True, True)
    >>> ranges_above((SparseBand(rows), SparseHash(rows)), 1), ranges_above((rows,), 0)
    (False, False)
    """
    if not 0 < k < len(levels):
        return False
    parent = levels[k - 1]
    return (parent.appends_band is not None or parent.appends_blocks is not None) and appends_entries(levels[k])


def slots_located(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` marks its slots (SparseByteMap) under levels located by
    coordinate only: its slots are counted before the loops, so a fiber below it is located by
    its slot ``parent * size + i`` (``pos`` one per slot, as ``Tensor.from_numpy`` stores it).

    >>> from compiler.levels import Dense, Element, SparseByteMap, SparseList
    >>> bm = SparseByteMap(SparseList(Element(0.0)))
    >>> slots_located((Dense(bm), bm), 1), slots_located((SparseList(bm), bm), 1)
    (True, False)
    """
    return levels[k].marks_slots and all(above.located_by_coordinate for above in levels[:k])


def in_slots(levels: tuple, k: int) -> bool:
    """Whether level ``k`` of ``levels`` is appended in a fiber per slot of the level above it, one
    that marks its slots under levels located by coordinate only (:func:`slots_located`): a level
    appended as a SparseList (:func:`appends_entries`), one that keeps its keys in a table
    (SparseHash, its key ``slot * size + i``), stores a band or blocks per fiber (SparseBand,
    SparseBlockList) or marks its slots (SparseByteMap, ``slot * size + i``).

    >>> from compiler.levels import Dense, Element, RunList, SparseByteMap, SparseHash, SparseList
    >>> bm = SparseByteMap(SparseHash(Element(0.0)))
    >>> in_slots((bm, bm.child), 1), in_slots((SparseList(bm), bm, bm.child), 2)
    (True, False)
    >>> in_slots((bm, RunList(Element(0.0))), 1)
    False
    """
    if not 0 < k < len(levels) or not slots_located(levels, k - 1):
        return False
    lvl = levels[k]
    return (appends_entries(lvl) or lvl.keys_in_table is not None or lvl.marks_slots
            or lvl.appends_band is not None or lvl.appends_blocks is not None)


def appended_under(levels: tuple, k: int) -> bool:
    """Whether the parents of level ``k`` of ``levels`` let the lattice emission append it in
    storage order as it appends a SparseList, when it stores a band or blocks per fiber
    (``appends_band``, ``appends_blocks``: :mod:`compiler.lattice.emit_ranges`) or keeps its keys
    ``parent * size + i`` in a table (``keys_in_table``): levels located by coordinate, or a parent
    that appends under any parent (a SparseList) or keeps its keys (its entry's position is its
    counter while the fiber under it is appended); under a level that marks its slots under located
    levels only (:func:`slots_located`), a level appended as a SparseList or a hash, band, block or
    byte map level, a fiber per slot (:func:`in_slots`); under a band or block level, a level appended
    as a SparseList, a fiber per position (:func:`ranges_above`).

    >>> from compiler.levels import Dense, Element, SparseBand, SparseByteMap, SparseHash, SparseList
    >>> band = SparseBand(Element(0.0))
    >>> appended_under((Dense(band), band), 1), appended_under((SparseList(band), band), 1)
    (True, True)
    >>> appended_under((SparseHash(band), band), 1), appended_under((SparseByteMap(band), band), 1)
    (True, True)
    >>> appended_under((SparseList(band), SparseByteMap(band), band), 2)
    False
    """
    if all(above.located_by_coordinate for above in levels[:k]):
        return True
    parent = levels[k - 1]
    # (under a byte map counted up front, a fiber per slot; under a band or blocks, a fiber per position)
    return (parent.keys_in_table is not None or appends_entries(parent) or ranges_above(levels, k)
            or in_slots(levels, k) or (covers_above(levels, k - 1) and appends_entries(levels[k])))


def building_output(fmt: Format, tensor: str, one_pass: bool = True, two_phase: bool = False,
                    threaded: bool = False):
    """``(built, why)``: the format the lattice kernel builds output ``tensor`` of format ``fmt``
    in, and why, or None when it assembles ``fmt`` itself (``one_pass``, ``two_phase``: as
    :func:`assembles`)."""
    holders = ("a SparseList, SparsePoint, SparseRunList, SparseInterval, SparseByteMap, SparseBand, SparseBlockList "
               "or SparseHash level")
    rows = "or under a SparseList, SparsePoint, SparseRunList, SparseInterval or SparseHash level when a SparseList, " \
        "a SparseHash or an innermost SparseByteMap follows them"
    blocks = f"and under {holders} when only Dense levels follow, {rows}" if one_pass else \
        f"and, in a one-pass kernel, under {holders} when only Dense levels follow, {rows}" + (
            "; in a two-phase one under a SparseList or a SparseHash under Dense levels or between a SparseList or "
            "SparseHash and a SparseList or SparseHash below them, and a SparseByteMap or "
            "SparseHash as the innermost level under Dense levels or a SparseList" + (
                "; on threads, under a SparseList or SparseHash that is the only sparse level, under Dense levels "
                "only, or under a SparseList under an outermost one, or between SparseLists, and a SparseByteMap or "
                "SparseHash under Dense levels only or innermost under an outermost SparseList"
                if threaded else "") if two_phase else "")
    return building(fmt, tensor, lambda levels, k: assembles(levels, k, one_pass, two_phase, threaded), "lattice",
                    f"it places Dense levels by position "
                    f"under Dense levels ({blocks}), and appends sorted lists of coordinates (SparseList, a "
                    f"SparseHash under Dense levels, a SparseList or a SparseHash, innermost or over Dense levels, a "
                    f"SparseByteMap, SparseBand or "
                    f"SparseBlockList there, innermost or over Dense levels, a SparsePoint there, or SparseCOO as the "
                    f"only level) and runs (a RunList, SparseRunList or SparseInterval innermost there; a "
                    f"SparseRunList or SparseInterval above other levels, each coordinate its own run, and a "
                    f"RunList so as the outermost level over a SparseList or Dense levels, its gaps runs of the fill; a "
                    f"SparseByteMap under Dense levels over one of those, a SparseList or a level appended as "
                    f"above, a fiber per slot; a "
                    f"SparseBand or SparseBlockList over one of those or a SparseList, a fiber per position) "
                    f"in storage order")


__all__ = ["appended_under", "placed_or_appended", "appends_entries", "assembles", "covers_above", "blocks_below", "building_output", "holds_blocks", "in_slots",
           "on_fibers", "ranges_above", "rows_of_blocks", "rows_of_fibers", "slots_located", "two_phase_blocks", "two_phase_keys",
           "two_phase_slots", "under_lists"]
