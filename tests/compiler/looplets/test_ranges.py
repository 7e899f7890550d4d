"""Constant ranges of the integers a kernel computes (compiler.looplets.ranges): by hypothesis, every
value an expression takes, its operands drawn within their facts' ranges and computed as C computes
int64 (truncating ``/`` and ``%``, arithmetic ``>>``, wrapping), lies in the range it is given; and a
range is only given where its bounds stay within int64."""

from hypothesis import example, given, settings, strategies as st

from compiler.imperative.ir import BinOp, Const, Load, Select, UnOp, Var
from compiler.looplets.bounds import IntFacts, assuming
from compiler.looplets.ranges import value_range, within

#: the operands: a uint8 and an int8 array's entries, a size fixed at 16, an unknown int64 scalar
LEAVES = {"u8": (Load("u8_val", Var("p")), (0, 255)), "i8": (Load("i8_val", Var("p")), (-128, 127)),
          "n": (Var("n0_size"), (16, 16)), "s": (Load("s_val", Const(0, "int64")), (-2 ** 63, 2 ** 63 - 1))}

#: each operand's name in an environment of :func:`run`
NAMES = {"u8": "u8_val", "i8": "i8_val", "n": "n0_size", "s": "s_val"}


def facts():
    f = IntFacts()
    f.value_range("u8_val", 0, 255, "uint8")
    f.value_range("i8_val", -128, 127, "int8")
    f.value_range("n0_size", 16, 16, "fixed", entries=False)
    return f


def wrap(v):
    return (v + 2 ** 63) % 2 ** 64 - 2 ** 63


def run(e, env):
    """``e``'s value as C computes it in int64, the operands from ``env``."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, (Load, Var)):
        return env[e.buffer if isinstance(e, Load) else e.name]
    if isinstance(e, UnOp):
        return wrap(-run(e.operand, env))
    if isinstance(e, Select):
        return run(e.then, env) if run(e.cond, env) else run(e.otherwise, env)
    a, b = run(e.left, env), run(e.right, env)
    if e.op in "/%" and b == 0:
        return None
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) if e.op in "/%" else None
    out = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, ">>": lambda: a >> b, "&": lambda: a & b,
           "/": lambda: q, "%": lambda: a - b * q, "<": lambda: int(a < b)}[e.op]()
    return wrap(out)


def exprs():
    leaf = st.sampled_from(sorted(LEAVES)).map(lambda k: LEAVES[k][0]) | st.integers(-300, 300).map(
        lambda v: Const(v, "int64"))
    shift = st.integers(0, 9).map(lambda v: Const(v, "int64"))
    divisor = st.integers(1, 40).map(lambda v: Const(v, "int64"))

    def grow(sub):
        return (st.tuples(st.sampled_from(["+", "-", "*", "&"]), sub, sub).map(lambda t: BinOp(*t))
                | st.tuples(sub, shift).map(lambda t: BinOp(">>", *t))
                | st.tuples(st.sampled_from(["/", "%"]), sub, divisor).map(lambda t: BinOp(*t))
                | sub.map(lambda x: UnOp("-", x))
                | st.tuples(sub, sub, sub).map(lambda t: Select(BinOp("<", t[0], t[1]), t[1], t[2])))
    return st.recursive(leaf, grow, max_leaves=6)


@settings(max_examples=60, deadline=None)
@given(exprs(), st.data())
@example(BinOp(">>", BinOp("*", LEAVES["u8"][0], LEAVES["n"][0]), Const(8, "int64")), None)  # the histogram's bin
def test_every_value_lies_in_the_range_given(e, data):
    with assuming(facts()):
        r = value_range(e)
    if r is None:
        return
    assert -2 ** 63 <= r[0] <= r[1] < 2 ** 63
    draws = [{"u8_val": 255, "i8_val": -128, "n0_size": 16, "s_val": -2 ** 63},
             {"u8_val": 0, "i8_val": 127, "n0_size": 16, "s_val": 2 ** 63 - 1}]
    if data is not None:
        draws += [{NAMES[k]: data.draw(st.integers(*LEAVES[k][1])) for k in LEAVES} for _ in range(4)]
    for env in draws:
        v = run(e, env)
        assert v is None or r[0] <= v <= r[1], (str(e), r, env, v)


def test_the_histograms_bin_is_within_its_bins_and_unknowns_are_not():
    u8, n, s = LEAVES["u8"][0], LEAVES["n"][0], LEAVES["s"][0]
    with assuming(facts()):
        assert value_range(BinOp(">>", BinOp("*", u8, n), Const(8, "int64"))) == (0, 15)
        assert within(BinOp(">>", BinOp("*", u8, n), Const(8, "int64")), n)
        assert not within(BinOp(">>", BinOp("*", u8, n), Const(7, "int64")), n)   # (up to 31)
        assert value_range(BinOp(">>", BinOp("*", u8, s), Const(8, "int64"))) is None
        assert value_range(BinOp("&", s, Const(15, "int64"))) == (0, 15)   # (whatever s holds)
        # a product past int64 wraps in C: no range
        assert value_range(BinOp("*", Const(2 ** 40, "int64"), Const(2 ** 40, "int64"))) is None
    assert value_range(u8) is None   # (no facts assumed: nothing known)
