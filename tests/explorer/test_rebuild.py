"""The schedule editor's reader and re-lowering (explorer.rebuild)."""

import pytest

from compiler.errors import StrategyError
from explorer.rebuild import parse_schedule, rebuild_for, schedule_code


def test_commands_with_tuples_keywords_and_index_notation():
    text = """reorder(i, k, j)   # comment
precompute((i, j), w, expr="C[i, j] + D[i, j]"); split(i, i0, i1, 8, direction='up')
precompute(j, t, A[i, j] * x[j])
Schedule().parallelize(i)"""
    assert parse_schedule(text) == [
        ("reorder", "i", "k", "j"),
        ("precompute", ("i", "j"), "w", "C[i, j] + D[i, j]"),
        ("split", "i", "i0", "i1", 8, "up"),
        ("precompute", "j", "t", "A[i, j] * x[j]"),
        ("parallelize", "i"),
    ]
    assert eval(schedule_code(text)) == parse_schedule(text)


def test_keywords_after_skipped_arguments_take_their_defaults():
    assert parse_schedule("precompute(j, format=dense)") == [("precompute", "j", "w", None, "dense")]
    from compiler.lattice.schedule import as_schedule
    assert str(as_schedule(parse_schedule("precompute(j, format=dense)"))) == \
        "Schedule(precompute(j, w, format=dense))"


@pytest.mark.parametrize("text,match", [
    ("reorder i j", r"schedule line 1: cannot read 'reorder i j'"),
    ("reorder(i, j)\nprecompute(j, w, expr=)", r"schedule line 2: cannot read 'precompute\(j, w, expr=\)'"),
    ("precompute(j, w, colour='red')", r"precompute has no argument colour"),
    ("split(i, i0, i1, direction='up')", r"an argument before direction is missing"),
])
def test_unreadable_commands_name_the_line(text, match):
    with pytest.raises(StrategyError, match=match):
        parse_schedule(text)


def test_a_sub_expression_precompute_from_the_editor_lowers():
    rebuild = rebuild_for("a[i] = b[i] * (c[i] + d[i])")
    formats = {n: "sparse_vector" for n in "bcd"}
    trace = rebuild(formats, "precompute(i, w, c[i] + d[i])")
    notes = [s.note for s in trace.steps if s.stage == "schedule:precompute"]
    assert notes and "c[i] + d[i]" in notes[0]
    assert any(s.stage == "emit-c" for s in trace.steps)


def test_a_loop_program_rebuilt_for_a_picker_format_keeps_the_shape_of_its_fixed_output():
    """A histogram's bins are indexed by a computed coordinate: rebuild_for keeps the shape of the
    tensor fixed for them when a picker gives their format (on main: "cannot size bins")."""
    import numpy as np
    import compiler
    from compiler.looplets.histogram import histogram_program
    program = histogram_program("shift")
    img, mask = np.array([[1, 17, 40, 63, 2]]), np.array([[1, 1, 1, 1, 0]], bool)
    scalars = dict(shift=np.int64(4), top=np.int64(64))
    rebuild = rebuild_for(program, "looplets", bins=np.zeros(4, np.int64), img=img, mask=mask, **scalars)
    assert rebuild.options == {"shapes": (("bins", (4,)),)}   # (the output's: the inputs' are each call's)
    trace = rebuild({"bins": compiler.dense(1, dtype="int64")}, "")
    kernel = compiler.lower(program, "looplets", bins=np.zeros(4, np.int64), img=img, mask=mask, **scalars)
    assert trace.find("emit-c")[0].artifacts[0].text == kernel.c_source
    got = kernel(bins=np.zeros(4, np.int64), img=img, mask=mask, **scalars).to_numpy()
    assert got.tolist() == np.bincount(img[mask] >> 4, minlength=4).tolist()
