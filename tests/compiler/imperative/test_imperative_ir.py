import json

import pytest

from compiler import serialize
from compiler.imperative import (BinOp, Block, Break, Buffer, Call, Const, Declare, For, Function,
                                 Growable, Helper, If, Load, OutScalar, Scalar, UnOp, Var, and_,
                                 const, walk)
from compiler.imperative.examples import csr_spmv, filter_nonzeros
from compiler.trace import Trace


def test_operators_build_nodes():
    i = Var("i")
    assert i + 1 == BinOp("+", i, Const(1, "int64"))
    assert 2 * i == BinOp("*", Const(2, "int64"), i)
    assert (i < 3) == BinOp("<", i, Const(3, "int64"))
    assert i.eq(0) == BinOp("==", i, Const(0, "int64"))
    assert -i == UnOp("-", i)
    assert and_(i > 0, i < 5).op == "&&"
    assert Buffer("x", "float64")[i] == Load("x", i)
    assert const(1.5).dtype == "float64" and const(True).dtype == "bool"


def test_nodes_are_hashable_and_structural():
    assert hash(csr_spmv()) == hash(csr_spmv())
    assert csr_spmv() == csr_spmv()
    assert csr_spmv("int32") != csr_spmv("int64")
    assert len({csr_spmv(), csr_spmv(), filter_nonzeros()}) == 2
    # lists are normalized to tuples
    i = Var("i")
    assert For(i, 0, 3, [Break()]).body == Block((Break(),))


def test_json_round_trip_and_trace():
    fn = filter_nonzeros()
    data = json.loads(json.dumps(serialize.encode(fn)))
    back = serialize.decode(data)
    assert back == fn and hash(back) == hash(fn)
    t = Trace()
    t.record("emit-c", before=fn)
    again = Trace.from_json(t.to_json())
    assert again[0].before == fn
    assert "kernel sparsify" in again[0].before_text


def test_validation():
    with pytest.raises(ValueError, match="not a valid identifier"):
        Var("for")
    with pytest.raises(ValueError, match="unknown binary operator"):
        BinOp("**", Var("a"), Var("b"))
    with pytest.raises(ValueError, match="does not fit"):
        Const(2 ** 40, "int32")
    with pytest.raises(ValueError, match="appears twice"):
        Function("f", (Scalar("n", "int64"), Buffer("n", "float64")), [])
    with pytest.raises(ValueError, match="not an OutScalar"):
        Function("f", (Growable("g", "float64", "n"),), [])
    with pytest.raises(ValueError, match="intent"):
        Buffer("x", "float64", "out")
    with pytest.raises(ValueError, match="not supported"):
        Declare(Var("z"), "float16")


def test_walk_and_helpers():
    fn = Function("f", (Scalar("a", "float64"), OutScalar("r", "float64")),
                  [If(Var("a") > 0, [Declare(Var("t"), "float64", Call("sq", (Var("a"),)))])],
                  helpers=(Helper("sq", "static inline double sq(double v) { return v * v; }"),))
    assert any(isinstance(n, Call) and n.function == "sq" for n in walk(fn))


def test_function_hashes_its_tree_when_first_asked():
    """A Function hashes its tree when its hash is first asked, once: the cleanup passes rebuild a
    kernel's Function many times, and the kernel cache hashes the last one only."""
    fn, same = csr_spmv(), csr_spmv()
    assert "_hash" not in vars(fn)
    assert hash(fn) == hash(same) == hash((fn.name, fn.params, fn.body, fn.helpers))
    assert vars(fn)["_hash"] == hash(fn) and fn == same and hash(fn) != hash(csr_spmv(name="other"))
    assert json.dumps(serialize.encode(fn)) == json.dumps(serialize.encode(csr_spmv()))
