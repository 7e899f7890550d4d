import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.errors import FormatError, ShapeError
from compiler.format import Format, coo, csc, csf, csr, dcsr, dense, parse_format, sparse_vector
from compiler.levels import Dense, Element, SparseCOO, SparseList


def test_printing_and_shorthands():
    assert str(csr()) == "Dense(SparseList(Element(0.0)))"
    assert str(csc()) == "Dense(SparseList(Element(0.0))), mode_order=(1, 0)"
    assert str(dcsr()) == "SparseList(SparseList(Element(0.0)))"
    assert str(sparse_vector(fill=1.5)) == "SparseList(Element(1.5))"
    assert str(dense(1, dtype="int32", fill=0)) == "Dense(Element(0, dtype='int32'))"
    assert repr(coo(3)) == "Format(SparseCOO(3, Element(0.0)))"
    for f, name in [(csr(), "csr"), (csc(), "csc"), (coo(), "coo"), (dcsr(), "dcsr"), (dense(3), "dense"),
                    (sparse_vector(), "sparse_vector"), (csf(), "csf"),
                    (Format(SparseList(Dense(Element(0.0)))), None)]:
        assert f.shorthand == name


def test_equality_and_hash_follow_the_key():
    assert csr() == csr() and hash(csr()) == hash(csr())
    assert csr(fill=math.nan) == csr(fill=math.nan) and hash(csr(fill=math.nan)) == hash(csr(fill=math.nan))
    assert len({csr(), csr(), csc(), csr(fill=1.0), csr(dtype="float32"), csr(index_dtype="int32")}) == 5
    assert parse_format("CSR") == csr() and parse_format(csr()) is not None
    assert Format(Dense(SparseList(Element(0.0, dtype="float64")))) == csr()


def test_format_drops_data_and_sizes():
    lvl = Dense(SparseList(Element(0.0, [1.0]), 3, pos=[0, 1], idx=[2]), 1)
    f = Format(lvl)
    assert f.root.size is None and f.levels[1].pos is None and f.leaf.vals is None
    assert f == csr() and f.ndim == 2 and f.fill == 0.0


def test_parse_format():
    assert parse_format("dense", ndim=3) == dense(3)
    assert parse_format("coo", ndim=3).levels[0].ndim == 3
    assert parse_format("csf", ndim=4).ndim == 4
    assert parse_format("sv") == parse_format("sparse") == sparse_vector()
    assert isinstance(parse_format(SparseCOO(2, Element(0.0))), Format)
    with pytest.raises(FormatError, match="unknown format 'ell'"):
        parse_format("ell")
    with pytest.raises(ShapeError, match="'dcsr' is for 2-D tensors, not 3-D"):
        parse_format("dcsr", ndim=3)
    with pytest.raises(FormatError, match="cannot use int 3 as a format"):
        parse_format(3)
    with pytest.raises(FormatError, match=r"mode_order \(0, 2\) is not a permutation of range\(2\)"):
        Format(Dense(Dense(Element(0.0))), (0, 2))


def test_a_mode_order_that_is_not_mode_numbers_and_an_unknown_index_dtype_are_named():
    from compiler.errors import DTypeError
    with pytest.raises(FormatError, match=r"mode_order 'ab' must be a tuple of mode numbers, a permutation of "
                                          r"range\(2\)"):
        Format(Dense(SparseList(Element(0.0))), "ab")
    with pytest.raises(DTypeError, match="index dtype 'int3' is not a dtype; use int32 or int64"):
        csr(index_dtype="int3")


@pytest.mark.parametrize("ndim", [2.5, "3", -1, True])
def test_ndim_of_a_shorthand_must_be_a_count_of_modes(ndim):
    with pytest.raises(ShapeError, match=f"format 'csf': ndim must be the number of modes, an integer >= 0; "
                                         f"got {re.escape(repr(ndim))}"):
        parse_format("csf", ndim=ndim)


def test_a_printed_spec_reads_back_as_the_same_format():
    from compiler.levels import SparseByteMap, SparseHash
    for f in [csr(), csc(), dcsr(), coo(3, dtype="int32", fill=-1), csf(3, index_dtype="int32", fill=math.nan),
              sparse_vector(fill=-math.inf), dense(2, dtype="bool", fill=False),
              Format(Dense(SparseHash(Element(0.0, dtype="float32")))), Format(SparseList(SparseByteMap(Element(1))))]:
        assert parse_format(str(f)) == f
    assert parse_format("Dense(SparseList(Element(0, dtype='int32'), index_dtype='int32'))") == \
        csr(dtype="int32", fill=0, index_dtype="int32")
    assert parse_format(" SparseCOO(2, Element(-inf, dtype='float32')) ") == coo(2, dtype="float32", fill=-math.inf)


@pytest.mark.parametrize("text, message", [
    ("Dense(", r"cannot read it as a level spec \('\(' was never closed\); write it as "
               r"Dense\(SparseList\(Element\(0.0\)\)\), optionally followed by , mode_order=\(1, 0\)"),
    ("Dense(" * 3000 + "Element(0)" + ")" * 3000, r"\(21010 characters\): cannot read it as a level spec"),
    ("Dense(Elem(0.0))", r"Elem\(...\) is not a level format"),
    ("Dense(Element(0.0), size=__import__('os'))", r"__import__\(...\) is not a level format"),
    ("Dense(Element(0.0)) + 1", r"Dense\(Element\(0.0\)\) \+ 1 is not a number, a tuple or a level"),
    ("Dense(Element(0.0)), x=1", r"a spec is one root level, optionally followed by , mode_order=\(...\)"),
    ("(3)", r"the root is 3, not a level such as Dense\(...\)"),
    ("Dense(Element(0.0, dtype='int3'))", r"Element\(...\): 'int3' is not a dtype"),
    ("Dense(Element(0.0), 5, 6)", r"Dense\(...\): .*positional arguments"),
    ("Dense(SparseList(Element(0.0))), mode_order=(0, 0)", r"mode_order \(0, 0\) is not a permutation"),
])
def test_a_spec_that_cannot_be_read_says_why(text, message):
    with pytest.raises(FormatError, match=r"format ['\"].*" + message):
        parse_format(text)


@settings(max_examples=75, deadline=None)
@given(st.data())
def test_any_format_reads_back_from_its_printed_text(data):
    from compiler import levels as L
    dtype = data.draw(st.sampled_from(["float64", "float32", "int64", "int32", "bool"]))
    fills = {"bool": [False, True], "int64": [0, -1, 7], "int32": [0, 3]}.get(dtype, [0.0, -1.5, math.inf,
                                                                                   -math.inf, math.nan])
    node = L.Element(data.draw(st.sampled_from(fills)), dtype=dtype)
    for _ in range(data.draw(st.integers(1, 3))):
        idt = data.draw(st.sampled_from(["int64", "int32"]))
        kind = data.draw(st.sampled_from(["Dense", "SparseList", "SparseCOO", "SparseHash", "SparseByteMap",
                                          "SparseBand", "RunList", "SparseRunList", "SparseBlockList"]))
        if kind == "Dense":
            node = L.Dense(node)
        elif kind == "SparseCOO":
            node = L.SparseCOO(data.draw(st.integers(1, 3)), node, index_dtype=idt)
        else:
            node = getattr(L, kind)(node, index_dtype=idt)
    ndim = Format(node).ndim
    order = data.draw(st.permutations(range(ndim)))
    f = Format(node, tuple(order))
    assert parse_format(str(f)) == f, str(f)


def test_a_shorthand_made_again_keeps_the_fill_it_is_given_to_its_last_bit():
    """parse_format keeps the Format it made for each set of arguments: one for each fill, complex NaNs of other
    parts, -0.0 and 0.0, 1 and True apart (a key that made a complex's NaNs one gave the fill NaN+NaNj to a tensor
    of fill NaN-infj)."""
    fills = [complex(math.nan, math.nan), complex(math.nan, -math.inf), complex(math.inf, math.nan), 0.0, -0.0]
    for fill in fills * 2:
        got = parse_format("sparse", fill=fill, dtype="complex128").fill
        assert repr(got) == repr(complex(fill)), (got, fill)
    assert parse_format("dense", ndim=1, fill=1, dtype="int64") is parse_format("dense", ndim=1, fill=1, dtype="int64")
    assert parse_format("dense", ndim=1, fill=True, dtype="bool").fill is True
