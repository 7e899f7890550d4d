"""Windows and strided slices of a CSC's rows under the looplets strategy (issue 30): ``A_csc[2:7]``,
``A_csc[1:9:2]``, ``A_csc[::-1]``, i.e. ``S[k, i] = slice(A[j, i], j -> k, (s, e, r))`` of a CSC ``A``.
The output's loops ran k outside i, inside which A's columns are looped: refused ("the walk of j would
be discordant"), and the array front end retried, then materialized the slice. Now, when the output
takes its writes column by column (dense, or CSC), the loop over i (A's columns) runs outside k and
each column's row level is windowed, or strided by the slice's one-step loop; a row-major sparse
output is still refused. Against numpy, the dense oracle and the IR interpreter."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import compiler as ss
from compiler import array as xp
from compiler.errors import StrategyError

from tests.compiler.looplets.shape_checks import checked_kernel
from tests.compiler.looplets.slice_cases import matrix, slice_program

KEYS = [np.s_[2:7], np.s_[1:9:2], np.s_[::-1], np.s_[8:1:-3], np.s_[-2:-9:-2], np.s_[3:3], np.s_[7:2]]


def array_kernel(expr, out):
    """The array front end's looplets kernel of ``expr`` into ``out``: one statement, nothing retried,
    materialized or converted."""
    kernel = ss.lower(expr, strategy="looplets", format=out)
    stages = kernel.trace.stages()
    assert not {"retry", "materialize", "convert"} & set(stages), kernel.trace
    return kernel


@pytest.mark.parametrize("out", [None, "csc", "dense"])
@pytest.mark.parametrize("key", KEYS)
def test_the_array_front_end_slices_a_cscs_rows_in_one_kernel(key, out):
    a = np.where(np.arange(40.0).reshape(10, 4) % 3 == 0, 0.0, np.arange(40.0).reshape(10, 4))
    a[1, 1], a[4, 2], a[5, 0] = np.nan, np.inf, -np.inf
    expr = xp.asarray(ss.Tensor.from_numpy(a, "csc"))[key]
    kernel = array_kernel(expr, out)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), a[key])
    np.testing.assert_array_equal(np.asarray(expr.compute(strategy="looplets", format=out)), a[key])


@pytest.mark.parametrize("out", ["csc", "dense"])
@pytest.mark.parametrize("key", [np.s_[2:7], np.s_[1:9:2], np.s_[::-1]])
def test_the_columns_loop_outside_the_sliced_rows(key, out):
    a = matrix((10, 4), 0.5, 0.0, seed=1)
    A = ss.Tensor.from_numpy(a, "csc", name="A")
    kernel, _ = checked_kernel(slice_program(10, key), a[key], out, A=A)
    program = str(next(s.after for s in kernel.trace.steps if s.stage == "program"))
    assert program.splitlines()[:2] == ["for i = 0:A0_size", f"  for k = 0:{len(a[key])}"], program
    assert not kernel.trace.find("gather") and not kernel.trace.find("convert"), kernel.trace


def test_a_coo_output_is_still_refused():
    # (its rows are appended under the loop over k: A's columns would be looped inside it; a CSR
    # output takes them by a scatter, test_shape_looplets_csc_windows.py)
    A = ss.Tensor.from_numpy(matrix((6, 3), 0.5, 0.0, seed=2), "csc", name="A")
    with pytest.raises(StrategyError, match="walk of j would be discordant.*strategy='lattice'"):
        ss.lower(slice_program(6, np.s_[1:5:2]), "looplets", A=A, S="coo")


@settings(max_examples=7, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=st.integers(0, 9), cols=st.integers(0, 4), r=st.sampled_from([1, 2, 3, -1, -2]),
       cut=st.tuples(st.integers(-10, 10) | st.none(), st.integers(-10, 10) | st.none()),
       density=st.sampled_from([0.0, 0.5, 1.0]), fill=st.sampled_from([0.0, 1.0, np.nan]),
       out=st.sampled_from(["csc", "dense"]), seed=st.integers(0, 2 ** 16))
@example(rows=10, cols=4, r=1, cut=(2, 7), density=0.5, fill=0.0, out="csc", seed=0)         # refused before
@example(rows=10, cols=4, r=2, cut=(1, 9), density=0.5, fill=np.nan, out="dense", seed=1)    # refused before
@example(rows=7, cols=3, r=-1, cut=(None, None), density=1.0, fill=1.0, out="csc", seed=2)   # reversed, all stored
@example(rows=6, cols=3, r=-2, cut=(2, 5), density=0.5, fill=0.0, out="dense", seed=3)       # empty
@example(rows=0, cols=2, r=3, cut=(None, None), density=0.5, fill=1.0, out="csc", seed=4)    # no rows
@example(rows=5, cols=0, r=1, cut=(1, 4), density=0.5, fill=np.nan, out="csc", seed=5)       # no columns
@example(rows=8, cols=3, r=-3, cut=(-1, 0), density=0.0, fill=1.0, out="csc", seed=6)        # all fill
def test_a_slice_of_a_cscs_rows(rows, cols, r, cut, density, fill, out, seed):
    a = matrix((rows, cols), density, fill, seed)
    key = slice(*cut, r)
    A = ss.Tensor.from_numpy(a, "csc", fill=fill, name="A")
    checked_kernel(slice_program(rows, key), a[key], out, A=A)
    kernel = array_kernel(xp.asarray(A)[key], out)
    np.testing.assert_array_equal(kernel().to_numpy(), a[key])
    np.testing.assert_array_equal(kernel.interpret().to_numpy(), a[key])


@pytest.mark.parametrize("out", [None, "csc", "dense"])
@pytest.mark.parametrize("parts", [(np.s_[:], np.s_[:]), (np.s_[:3], np.s_[2:5]), (np.s_[:], np.s_[:3]),
                                   (np.s_[::2], np.s_[8:1:-3]), (np.s_[3:3], np.s_[::-1])])
def test_a_vstack_of_a_cscs_row_windows_is_one_kernel(parts, out):
    # (the output's loops were its indices in order, the row index first, split into one loop per part, which no
    # pass reorders: a CSC's vstack was 'written out of order' into CSC, its windows 'discordant', materialized;
    # now a concatenation along an output's index takes its loops in the output's storage order, each column's
    # rows split into the parts; into a dense output, stored rows first, the windows were still refused: a dense
    # output is now written in the operands' storage order where its own is refused, shapes._operands_order)
    a = np.where(np.arange(40.0).reshape(10, 4) % 3 == 0, 0.0, np.arange(40.0).reshape(10, 4))
    a[1, 1], a[4, 2], a[5, 0] = np.nan, np.inf, -np.inf
    A = xp.asarray(ss.Tensor.from_numpy(a, "csc"))
    kernel = array_kernel(xp.concat([A[parts[0]], A[parts[1]]], axis=0), out)
    want = np.concatenate([a[parts[0]], a[parts[1]]])
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
    # (one loop over the columns, A's first stored level, outermost: each column's rows written part after part;
    # into a dense output, where the output's order is not refused, a loop nest per part)
    program = kernel.trace.find("program")[0].after_text
    if out != "dense" or parts[0] != parts[1]:
        assert program.splitlines()[0].endswith("= 0:A0_size") and "\nfor " not in program, program


_WINDOW = st.tuples(st.integers(-12, 12) | st.none(), st.integers(-12, 12) | st.none(),
                    st.sampled_from([None, 1, 2, 3, -1, -2]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(1, 9), cols=st.integers(1, 4), windows=st.lists(_WINDOW, min_size=2, max_size=3),
       fill=st.sampled_from([0.0, np.nan, 1.0]), out=st.sampled_from([None, "csc", "dense"]),
       seed=st.integers(0, 2 ** 16))
@example(rows=10, cols=4, windows=[(None, 3, None), (2, 5, None)], fill=0.0, out="dense", seed=0)   # refused before
def test_a_vstack_of_a_cscs_row_windows_by_property(rows, cols, windows, fill, out, seed):
    """A vstack of two or three windows (strided, reversed, empty) of one CSC's rows, stored NaN and
    infinities among its values: one looplets kernel into CSC or dense, against numpy and the interpreter."""
    rng = np.random.default_rng(seed)
    a = np.where(rng.random((rows, cols)) < 0.5, rng.choice([1.0, -2.0, np.nan, np.inf, -np.inf], (rows, cols)), fill)
    A = xp.asarray(ss.Tensor.from_numpy(a, "csc", fill=fill))
    keys = [slice(*w) for w in windows]
    want = np.concatenate([a[k] for k in keys])
    kernel = array_kernel(xp.concat([A[k] for k in keys], axis=0), out)
    for got in (kernel(), kernel.interpret()):
        got.validate()
        np.testing.assert_array_equal(got.to_numpy(), want)
