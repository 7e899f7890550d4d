"""What the lattice emitter knows of one level of a sparse output as it assembles it.

Each field is named for its role in the append/insert protocol, not for a level's storage:
``starts`` is the array where each fiber starts (a SparseList's ``pos``, a band's ``ofs``, whatever
the level calls it through :attr:`~compiler.levels.level.Level.starts_array`) and ``appended`` the
arrays that grow by one element per entry kept (coordinates, or a run's bounds). The names in it are
C names, ``binding.array_name(tensor, k, <the level's own name>)``, so no strategy code spells a
level's array.

The record is mutable on purpose: the emitter fills it in as it decides the level's assembly (a
band's ends after its starts, a two-phase kernel's per-row counter between its two phases).

>>> from compiler.levels import Element, SparseList
>>> info = OutputLevel(SparseList(Element(0.0)), k=1, mode=1, counter="pC1", starts="C1_pos", appended=["C1_idx"])
>>> info.starts, info.appended, info.slots is None
('C1_pos', ['C1_idx'], True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunNames:
    """The C names a run-length output level appends with: the fiber being appended (``fiber``) and
    where its last run ends (``end``); ``fill`` whether gaps are runs of the fill (a full level) and
    ``located`` whether the levels above are located by coordinate (its fibers closed in order)."""

    fiber: str
    end: str
    fill: bool
    located: bool


@dataclass(eq=False)
class OutputBlock:
    """The Dense levels under an output's last sparse level, assembled as a block of slots per
    position of it (TACO's ``{sparse, dense}``): ``k`` its first level, ``mode`` that level's storage
    mode, and the C names of the values' length (``length``), how far the values hold the fill
    (``prepared``), the current block's first slot (``start``) and whether a slot of it got a value
    other than the fill (``kept``). ``final`` is the statement that sets the values' length after the
    loops (a two-phase kernel on threads sets it after its compaction instead).

    >>> OutputBlock(k=1, mode=1, length="C_val_len", prepared="C1_filled", start="C1_start", kept="C1_kept").start
    'C1_start'
    """

    k: int
    mode: int
    length: str
    prepared: str
    start: str
    kept: str
    final: Any = None


@dataclass(eq=False)
class OutputLevel:
    """One sparse level ``k`` (of storage mode ``mode``) of the output, as the emitter appends it.

    ``counter`` counts its entries (its length), ``index_type`` is its index arrays' C type,
    ``starts`` its fibers' starts (a buffer the call allocates if ``starts_buffer``, else grown to
    ``starts_len``). A level that marks its slots has ``slots`` (their count) and ``marks``; one under
    it a fiber per slot (``slotted``, the parent's slot count). A level that keeps keys in a table has
    ``keyed`` (its child and key arrays, with their C types), ``table`` and ``capacity``, and, once
    built, ``table_stmts``. A band or block level has ``ranged`` (``"band"`` or ``"blocks"``), its
    ranges' ``ends``, a band its ``band_lo``, a block list its ``blocks`` counter, ``block_starts``
    (grown to ``block_starts_len``) and ``next_block``; a level that marks slots under it
    ``prepared``. A run-length level has ``runs``; one above others appends ``units`` (a run per
    coordinate) and, full, ``covers`` (where its fiber's runs end so far). A SparseList under Dense
    levels under an appended level has ``row_parent``, that level, each of whose entries gets a row
    of the Dense slots, a fiber per slot; the first of those Dense levels has ``rows``, the SparseList.
    """

    level: Any
    k: int
    mode: int
    counter: str | None = None
    index_type: str | None = None
    appended: list | None = None
    starts: str | None = None
    starts_buffer: bool = False
    starts_len: str | None = None
    slots: str | None = None
    marks: str | None = None
    slotted: str | None = None
    keyed: list | None = None
    table: str | None = None
    capacity: str | None = None
    table_stmts: list | None = None
    ranged: str | None = None
    ends: str | None = None
    band_lo: str | None = None
    blocks: str | None = None
    block_starts: str | None = None
    block_starts_len: str | None = None
    next_block: str | None = None
    prepared: str | None = None
    runs: RunNames | None = None
    units: bool = False
    covers: str | None = None
    row_parent: Any = None
    rows: Any = None
