"""Bad loop programs give clear errors pointing at the line of the user's program."""

import numpy as np
import pytest

from compiler import Tensor
from compiler.levels import Element, SparseList
from compiler.looplets import ProgramError, compile_program, loop_program

A = Tensor.from_numpy(np.array([[0, 1.0, 0], [2.0, 0, 3.0]]), "csr")
x = Tensor.from_numpy(np.array([1.0, 2.0, 3.0]), "dense")


def src(body: str) -> str:
    return "def k(y, A, x):\n" + body


def line_of(e) -> int:
    return int(str(e.value).split()[1])


def test_read_and_write_one_tensor_in_one_scope():
    prog = loop_program(source=src("    for i in _:\n        y[i] = x[i]\n        x[i] += y[i]\n"))
    with pytest.raises(ProgramError, match="read and written") as e:
        compile_program(prog, y="dense", A=A, x="dense")
    assert line_of(e) == 4


def test_conflicting_extents():
    z = Tensor.from_numpy(np.ones(5), "dense")
    prog = loop_program(source=src("    for i in _:\n        for j in _:\n            y[i] += A[i, j] * x[j]\n"))
    with pytest.raises(ProgramError, match="conflicting extents for index j") as e:
        compile_program(prog, y="dense", A=A, x=z)
    assert line_of(e) == 4


def test_out_of_order_sparse_list_write_suggests_hash_or_bytemap():
    prog = loop_program(source=src("    for j in _:\n        for i in _:\n            y[i] += A[i, j]\n"))
    At = Tensor.from_numpy(A.to_numpy(), "csc")
    with pytest.raises(ProgramError, match="SparseHash or SparseByteMap") as e:
        compile_program(prog, y=SparseList(Element(0.0)), A=At, x=x)
    assert line_of(e) == 4


def test_index_expression_no_wrapper_covers():
    prog = loop_program(source=src("    for i in _:\n        y[i] = x[i * 2]\n"))
    with pytest.raises(ProgramError, match="no wrapper covers the index expression") as e:
        compile_program(prog, y="dense", A=A, x=x)
    assert line_of(e) == 3


def test_unknown_operator():
    with pytest.raises(ProgramError, match="unknown operator 'maxx'; did you mean max") as e:
        loop_program(source=src("    for i in _:\n        y[i] <<= maxx, x[i]\n"))
    assert line_of(e) == 3
    with pytest.raises(ProgramError, match="unknown operator 'frob'") as e:
        loop_program(source=src("    for i in _:\n\n        y[i] = frob(x[i], 1)\n"))
    assert line_of(e) == 4


def test_else_is_rejected():
    with pytest.raises(ProgramError, match="no else") as e:
        loop_program(source=src("    for i in _:\n        if x[i] > 0:\n            y[i] = 1.0\n"
                                "        else:\n            y[i] = 2.0\n"))
    assert line_of(e) == 3


def test_a_written_tensor_is_an_output_even_when_given_with_values():
    # (before several outputs, this program was refused for writing two tensors; now x, given
    # dense, is updated from its values and returned beside y, in the parameters' order)
    prog = loop_program(source=src("    for i in _:\n        x[i] += 1.0\n        y[i] = 2.0\n"))
    got = compile_program(prog, y="dense", A=A, x=x)(A=A, x=x)
    assert got._fields == ("y", "x")
    np.testing.assert_array_equal(got.x.to_numpy(), x.to_numpy() + 1)
    np.testing.assert_array_equal(got.y.to_numpy(), [2.0, 2.0, 2.0])


def test_error_names_the_file_line():
    def k(y, A, x):
        for i in _:  # noqa: F821
            y[i] = x[i * 2]
    with pytest.raises(ProgramError) as e:
        compile_program(loop_program(k), y="dense", A=A, x=x)
    assert line_of(e) == k.__code__.co_firstlineno + 2
    assert "y[i] = x[i * 2]" in str(e.value)


def test_unresolvable_extent():
    prog = loop_program(source="def k(y):\n    for i in _:\n        y[i] = 1.0\n")
    with pytest.raises(ProgramError, match="cannot infer the extent of loop index i"):
        compile_program(prog, y="dense")


def test_colon_declares_an_output_like_ellipsis():
    """``y[:] = 0`` declares an output (as ``y[...] = 0``); other slices get a clear message."""
    prog = loop_program(source=src("    y[:] = 0\n    for i in _:\n        for j in _:\n            y[i] += A[i, j] * x[j]\n"))
    x = Tensor.from_numpy(np.arange(A.shape[1], dtype=float), "dense")
    k = compile_program(prog, y="dense", A=A, x=x)
    np.testing.assert_allclose(k(A=A, x=x).to_numpy(), A.to_numpy() @ x.to_numpy())
    with pytest.raises(ProgramError, match="declare an output") as e:
        loop_program(source=src("    for i in _:\n        y[1:2] += x[i]\n"))
    assert line_of(e) == 3


def test_window_out_of_bounds_names_the_file_line():
    def k(y, A, x):
        for i in _:  # noqa: F821
            y[i] = x[1:4][i]
    with pytest.raises(ProgramError, match="the window 1:4 of x is out of bounds: mode 0 of x has size 3") as e:
        compile_program(loop_program(k), y="dense", A=A, x=x)
    assert line_of(e) == k.__code__.co_firstlineno + 2


@pytest.mark.parametrize("options, message", [
    # (its schedule takes privatize only: the lattice strategy's commands are named as the lattice's)
    ({"schedule": [("parallelize", "i")]},
     r"parallelize\(i\) is a command of the lattice strategy \(strategy='lattice'\)"),
    ({"order": ["j", "i"], "assembly": "two-phase"},
     r"no option\(s\) assembly, order; .*assembly, order are options of the lattice strategy"),
    ({"unroll": 4}, r"^the looplets strategy has no option\(s\) unroll; it takes name=, max_looplets= and "
                    r"schedule= \(privatize only"),
])
def test_an_option_the_looplets_strategy_does_not_take_is_refused(options, message):
    # (it was dropped silently: a schedule given to looplets changed nothing)
    from compiler import lower
    from compiler.errors import StrategyError
    with pytest.raises(StrategyError, match=message):
        lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x, options=options)
    assert np.allclose(lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x, options={"name": "spmv_named"})
                       (A=A, x=x).to_numpy(), A.to_numpy() @ x.to_numpy())


def _fill_one_operands(names, n=6):
    from compiler.format import csr
    rng = np.random.default_rng(1)
    return {k: Tensor.from_numpy(np.where(rng.random((n, n)) < 0.3, rng.random((n, n)) + 0.5, 1.0),
                                 csr(fill=1.0), name=k) for k in names}


def test_a_program_past_the_looplet_limit_is_stopped_with_what_to_do():
    # a product of fill-1 operands coiterates them all: each loop lowers every present/absent case
    from compiler import evaluate, lower
    ts = _fill_one_operands("ABC")
    prog = "y[i, j] = A[i, j] * B[i, j] * C[i, j]"
    with pytest.raises(ProgramError) as e:
        lower(prog, strategy="looplets", options={"max_looplets": 40}, **ts)
    assert "stopped after 40 looplet lowerings (the last over " in str(e.value)
    assert "strategy='lattice'" in str(e.value) and "options={'max_looplets': N}" in str(e.value)
    expected, _ = evaluate(prog, **ts)
    for options in (None, {"max_looplets": 400}):   # the default, and a limit it keeps below
        got = lower(prog, strategy="looplets", options=options, **ts)(**ts).to_numpy()
        np.testing.assert_allclose(got, expected)


def test_the_looplet_limit_names_the_line_of_a_loop_program():
    from compiler import lower
    ts = _fill_one_operands("BC")
    prog = loop_program(source="def k(y, B, C):\n    for i in _:\n        for j in _:\n"
                               "            y[i, j] = B[i, j] * C[i, j]\n")
    with pytest.raises(ProgramError, match=r"line \d of k: the looplets strategy stopped after 3 looplet"):
        lower(prog, strategy="looplets", y="dense", options={"max_looplets": 3}, **ts)


@pytest.mark.parametrize("limit", [0, -5, 2.5, True, "many"])
def test_a_looplet_limit_that_is_no_positive_integer_is_refused(limit):
    from compiler import lower
    from compiler.errors import StrategyError
    with pytest.raises(StrategyError, match=rf"max_looplets={limit!r}: give the most looplet lowerings"):
        lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=x, options={"max_looplets": limit})


def test_a_level_class_without_an_unfurl_is_told_from_a_built_in_one_of_its_name():
    """A level class of a built-in one's name: the error said SparsePoint has no unfurl, then
    listed SparsePoint among the levels to use. (Not a subclass of a built-in level: a subclass
    inherits its parent's unfurl, see test_looplets_level_subclasses.)"""
    from dataclasses import dataclass
    from typing import Any

    import compiler as ss
    from compiler.levels import Dense
    from compiler.levels.level import IndexedLevel

    @dataclass(frozen=True, eq=False, repr=False)
    class SparsePoint(IndexedLevel):   # stored as a SparseList, with none of its looplets
        child: Any
        size: Any = None
        pos: Any = None
        idx: Any = None
        index_dtype: Any = None
        name = "SparsePoint"
        index_arrays = ("pos", "idx")
        count, children, fiber, from_entries, check = (SparseList.count, SparseList.children, SparseList.fiber,
                                                       SparseList.from_entries, SparseList.check)

    A = Tensor.from_numpy(np.eye(3), Dense(SparsePoint(Element(0.0))), name="A")
    assert type(A.levels[1]) is SparsePoint
    # (a kernel lowered before for the built-in SparsePoint is not this class's: the format
    # says which class, not only its name; this test failed after such a lowering in its worker)
    builtin = ss.Tensor.from_numpy(np.eye(3), "Dense(SparsePoint(Element(0.0)))")
    ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=builtin, x=np.ones(3))
    assert A.format != builtin.format
    with pytest.raises(ss.StrategyError) as e:
        ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets", A=A, x=np.ones(3))
    message = str(e.value)
    assert f"level 1 (SparsePoint, the class from {__name__}, not compiler.levels." in message, message
    assert "register_unfurl" in message and ", SparsePoint," in message


def test_a_program_named_as_a_c_keyword_compiles():
    # (its kernel was named `double`: "function name 'double' is not a valid identifier for generated C")
    @loop_program
    def double(y, x):
        for i in _:
            y[i] = x[i] * 2
    k = compile_program(double, y="dense", x=x)
    np.testing.assert_array_equal(k(x=x).to_numpy(), x.to_numpy() * 2)
    assert "int k_double(" in k.c_source
