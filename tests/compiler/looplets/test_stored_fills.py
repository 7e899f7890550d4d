"""A write of the fill over a stored SparseHash key leaves no explicit fill (compiler.looplets.stored_fills).

Before, ``y[i] = a[i]; y[i] = b[i]`` by two loops into a SparseHash, where ``b`` is the fill at a key
``a`` stored, kept the key with the fill as its value (and Dense(SparseHash), SparseHash(SparseHash),
SparseList(SparseHash) rows written twice likewise): the values were right, the storage held more
than ``Tensor.from_numpy`` (or Finch, or scipy) does. Now the freeze leaves such keys out, and a hash
or a SparseList level above leaves out an entry whose fiber they emptied (a SparseList kept it until
the freeze asked it too); a level that cannot keeps it, as the trace says. Oracles: numpy,
``Tensor.from_numpy``'s storage, the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor
from compiler.format import Format
from compiler.levels import Element, SparseHash, SparseList
from compiler.looplets import compile_program
from compiler.looplets.level_writers import ListWriter, register_output
from compiler.testing import random_sparse

from tests.compiler.looplets.test_looplets_appends import hstack_rows as hstack
from tests.compiler.looplets.test_overwrites import (entries_twice, filled, loops_then_b, matrix_format, rows_twice,
                                                     then_b, then_fill, vector_format)


class KeepingList(SparseList):
    """A SparseList whose writer cannot leave out an entry at its freeze."""

    name = "KeepingList"


class KeepingWriter(ListWriter):
    drops_emptied_entries = False


register_output(KeepingList, KeepingWriter(counts_entries=True, appends_in_order=True))


def assert_stored(got: Tensor, want: np.ndarray, kept_from=None) -> None:
    """``got`` holds ``want`` and is a valid tensor storing exactly the coordinates
    ``Tensor.from_numpy`` stores (each level's sorted view, its keys, the values in order), no
    explicit fill; level ``kept_from`` may keep an entry whose fiber is empty (so it and the levels
    below it are checked by their count of values alone)."""
    np.testing.assert_array_equal(got.to_numpy(), want)
    got.validate()
    canon = Tensor.from_numpy(want, got.format)
    assert got.nnz == canon.nnz, (got.nnz, canon.nnz)
    for k, (g, w) in enumerate(zip(got.levels, canon.levels)):
        if kept_from is not None and k >= kept_from:
            return
        for kind in ("pos", "idx", "key"):
            if kind in w.arrays():
                a, b = g.arrays()[kind], w.arrays()[kind]
                np.testing.assert_array_equal(np.sort(a) if kind == "key" else a, np.sort(b) if kind == "key" else b,
                                              err_msg=f"level {k}: {kind}")
    last = got.levels[-1]
    order = last.ptr if hasattr(last, "ptr") and last.ptr is not None else np.arange(got.nnz)
    np.testing.assert_array_equal(got.vals[:got.nnz][order], canon.vals[:canon.nnz])


def run_both(k, want, kept_from=None, **tensors):
    for got in (k(**tensors), k.interpret(**tensors)):
        assert_stored(got, want, kept_from)


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
def test_a_fill_written_over_a_hash_key_leaves_no_entry(fill):
    a = filled(np.array([1.0, 0, 2, 3, 0, np.inf, np.nan, -np.inf]), fill)
    b = filled(np.array([0.0, 5, 0, 7, 0, -np.inf, 0, 0]), fill)
    A, B = (Tensor.from_numpy(v, "sparse", fill=fill) for v in (a, b))
    y = vector_format("hash", fill)
    # (two loops: the second's fill over the first's key stayed, an explicit fill)
    run_both(compile_program(loops_then_b, y=y, a=A, b=B), b, a=A, b=B)
    run_both(compile_program(then_b, y=y, a=A, b=B), b, a=A, b=B)
    run_both(compile_program(then_fill, y=y, a=A), np.zeros(8), a=A)   # (0: the fill or a stored value)
    empty = Tensor.from_numpy(np.full(8, fill), "sparse", fill=fill)
    run_both(compile_program(loops_then_b, y=y, a=A, b=empty), np.full(8, fill), a=A, b=empty)
    run_both(compile_program(loops_then_b, y=y, a=empty, b=B), b, a=empty, b=B)


def test_many_keys_dropped_shrink_the_table():
    # (20 keys grow the table to 64 slots; 2 kept take 8: the capacity readers recompute)
    a = np.arange(1.0, 21.0)
    b = np.zeros(20)
    b[[3, 17]] = [-1.0, np.inf]
    A, B = Tensor.from_numpy(a, "sparse"), Tensor.from_numpy(b, "sparse")
    k = compile_program(loops_then_b, y=vector_format("hash", 0.0), a=A, b=B)
    run_both(k, b, a=A, b=B)
    assert len(k(a=A, b=B).levels[0].tbl) == 8


@pytest.mark.parametrize("fill", [0.0, 1.0, np.nan])
@pytest.mark.parametrize("out", ["dense_hash", "hash_hash", "sparse_hash"])
def test_a_row_written_twice_leaves_no_explicit_fill(out, fill):
    rng = np.random.default_rng(5)
    a = random_sparse((5, 4), 0.6, rng, fill=fill, empty=(1,))
    b = random_sparse((5, 4), 0.5, rng, fill=fill, empty=(3,))
    a[0, 0], a[2, 1], b[2, 1], b[4] = np.nan, np.inf, -np.inf, fill   # (row 3 and row 4: a's entries all emptied)
    A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "coo", fill=fill)
    for prog in (rows_twice, entries_twice):
        k = compile_program(prog, D=matrix_format(out, fill), A=A, B=B)
        run_both(k, b, A=A, B=B)   # (a SparseList kept the entry of row 3 and row 4, emptied)


def test_the_trace_says_which_levels_drop_and_which_keep():
    A = Tensor.from_numpy(np.array([[1.0, 0], [0, 2]]), "csr")
    step = compile_program(rows_twice, D=matrix_format("hash_hash", 0.0), A=A, B=A).trace.find("stored-fills")
    assert step and "D: its freeze leaves out the entries a write of the fill emptied, at level(s) 1 (SparseHash), " \
        "0 (SparseHash)" in step[0].after, step
    step = compile_program(rows_twice, D=matrix_format("sparse_hash", 0.0), A=A, B=A).trace.find("stored-fills")
    assert "at level(s) 1 (SparseHash), 0 (SparseList)" in step[0].after and "cannot" not in step[0].after
    # (a level whose writer cannot leave out an entry keeps it, and the trace says so)
    k = compile_program(rows_twice, D=Format(KeepingList(SparseHash(Element(0.0)))), A=A, B=A)
    assert "D: level 0 (KeepingList) cannot leave out an entry" in k.trace.find("stored-fills")[0].after
    b = np.array([[0.0, 0], [0, 2]])
    run_both(k, b, 0, A=A, B=Tensor.from_numpy(b, "csr"))
    # (writes that never meet, an hstack's parts: no step, and no compaction in the C)
    k = compile_program(hstack, D=matrix_format("dense_hash", 0.0), A=A, B=A)
    assert not k.trace.find("stored-fills") and "kept" not in k.c_source


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=st.tuples(st.integers(0, 4), st.integers(0, 4)),
       density=st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.3, 1.0])),
       fill=st.sampled_from([0.0, 1.0, np.nan]), out=st.sampled_from(["dense_hash", "hash_hash", "sparse_hash"]),
       prog=st.sampled_from(["rows_twice", "entries_twice"]), specials=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_writes_of_the_fill_over_hash_entries_store_what_from_numpy_does(shape, density, fill, out, prog, specials,
                                                                         seed):
    rng = np.random.default_rng(seed)
    a, b = (random_sparse(shape, d, rng, fill=fill) for d in density)
    if specials and a.size:
        a.flat[rng.integers(a.size)] = np.nan if fill == fill else np.inf
        b.flat[rng.integers(b.size)] = -np.inf
    A, B = Tensor.from_numpy(a, "csr", fill=fill), Tensor.from_numpy(b, "csr", fill=fill)
    k = compile_program(rows_twice if prog == "rows_twice" else entries_twice, D=matrix_format(out, fill), A=A, B=B)
    run_both(k, b, A=A, B=B)
