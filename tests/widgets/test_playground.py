"""The playground, headless: each control re-lowers and the panes show the new kernel."""

import html as h
import re

import numpy as np
import pytest

import compiler

from compiler.capabilities import capabilities
from compiler.errors import StrategyError
from widgets import Playground

SPMV = "y[i] = A[i, j] * x[j]"


def text(html: str) -> str:
    return h.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture
def play():
    return Playground(SPMV, A="csr", x="dense")


def test_it_opens_on_the_lowered_kernel_with_a_picker_per_tensor(play):
    assert play.session.error is None
    assert set(play.format_pickers) == {"y", "A", "x"}   # the output's too
    assert play.formats()["A"].shorthand == "csr"
    assert "lattice_y" in play.explorer.c_pane.value
    assert "change the expression" in play.changed_pane.value


def test_typing_an_expression_relowers_and_keeps_the_formats_of_the_tensors_it_keeps(play):
    old = play.session
    play.expression.value = "y[i] = A[i, j] * x[j] + z[i]"
    assert play.session is not old and play.session.error is None
    assert set(play.format_pickers) == {"y", "A", "x", "z"}
    assert play.formats()["A"].shorthand == "csr"
    assert "t_j + z_val[i]" in text(play.explorer.c_pane.value)
    # the C on screen is the kernel compiler.lower builds for the pickers' formats, and it computes
    kernel = compiler.lower(play.program, play.strategy.value, **play.formats())
    assert kernel.c_source == play.session.last_artifact("c").text
    A = np.array([[0, 2.0, 0], [1.0, 0, 3.0]])
    x, z = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    got = kernel(A=compiler.Tensor.from_numpy(A, "csr"), x=x, z=z).to_numpy()
    np.testing.assert_allclose(got, A @ x + z)
    assert "+ z[i]" in text(play.explorer.program_pane.value)
    assert play.parse_error.layout.display == "none"


def test_a_parse_error_shows_in_the_ui_and_keeps_the_kernel(play):
    old, c = play.session, play.explorer.c_pane.value
    play.expression.value = "y[i] = A[i, j] * * x[j]"
    shown = text(play.parse_error.value)
    assert play.parse_error.layout.display == ""
    assert "unexpected '*'" in shown and "^" in shown and "Traceback" not in shown
    assert play.session is old and play.explorer.c_pane.value == c
    play.expression.value = SPMV + " * 2"   # a good expression clears it
    assert play.parse_error.layout.display == "none" and play.session.error is None


def offered(play) -> list:
    """The commands the schedule editor's buttons offer (a disabled one is shown, not offered)."""
    return [b.description for b in play.controls.command_buttons.children if not b.disabled]


def test_the_strategy_toggle_relowers_and_offers_that_strategys_schedule(play):
    assert play.strategy.options == ("lattice", "looplets")
    assert play.controls.schedule_row.layout.display == ""
    assert offered(play) == ["reorder", "precompute", "parallelize", "split", "fuse", "pos"]
    play.schedule_editor.value = "reorder(i, j)"
    play.strategy.value = "looplets"
    assert play.session.error is None   # the looplet strategy was not given the lattice's schedule
    assert "y_kernel" in play.explorer.c_pane.value and "lattice_y" not in play.explorer.c_pane.value
    assert "unfurl" in play.session.stages()
    # the looplets' schedule: privatize, for loop programs only; index notation gets an empty box of
    # its own, disabled, saying so (issue 31: privatize was offered here and always refused)
    assert play.controls.schedule_row.layout.display == "" and play.schedule_editor.value == ""
    assert offered(play) == [] and play.schedule_editor.disabled
    (shown,) = play.controls.command_buttons.children
    assert shown.disabled and shown.tooltip == "privatize(tensor, copies=4, workspace=True) applies to loop programs only"
    assert text(play.controls.schedule_help.value) == \
        "the looplets strategy's schedule takes no command for index notation; " \
        "privatize(tensor, copies=4, workspace=True) applies to loop programs only"
    assert play.schedule_editor.placeholder == "no command of the looplets strategy's schedule applies to index notation"
    assert "takes no schedule for index notation" in text(play.marks.value)
    assert play.formats()["A"].shorthand == "csr"
    play.strategy.value = "lattice"
    assert play.schedule_editor.value == "reorder(i, j)" and "lattice_y" in play.explorer.c_pane.value
    assert "privatize" not in offered(play) and not play.schedule_editor.disabled


def test_the_looplets_privatize_offered_by_the_editor_lowers_a_histogram():
    play = Playground("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense")
    play.schedule_editor.value = "privatize(y, 2)"   # (the box is disabled: as a notebook might still set it)
    play.relower()   # index notation's y is updated at its own loops' coordinates: it says so, and what would
    assert "privatize(y, 2) does not apply to index notation" in str(play.session.error)
    assert "parallelize(i, races='copies')" in str(play.session.error)
    # a box over a histogram (a loop program's rebuild): the schedule applies, and counts
    from compiler.looplets.histogram import histogram_program
    from explorer.rebuild import rebuild_for
    from widgets.pickers import RebuildControls
    program = histogram_program("shift")
    img, mask = np.array([[1, 17, 17, 40, 300, 2]]), np.array([[1, 1, 1, 1, 1, 0]])
    bins = compiler.Tensor.from_numpy(np.zeros(4, np.int64), "dense")
    tensors = dict(bins=bins, img=img, mask=mask.astype(bool))
    # (bins's shape is the tensor's given: no options={"shapes": ...} since issue 31)
    c = RebuildControls(rebuild_for(program, "looplets", shift=np.int64(4), top=np.int64(64), **tensors), {})
    assert [b.description for b in c.command_buttons.children] == ["privatize"] and not c.schedule_editor.disabled
    c.schedule_editor.value = "privatize(bins, copies=2)"
    session = c.relower()
    assert session.error is None
    assert "2 iterations a step, each updating its own table of bins" in session.last_artifact("c").text
    kernel = compiler.lower(program, "looplets", shift=np.int64(4), top=np.int64(64), **tensors,
                            options={"schedule": [("privatize", "bins", 2)]})
    assert kernel.c_source == session.last_artifact("c").text
    got = kernel(bins=bins, img=img, mask=mask.astype(bool), shift=np.int64(4), top=np.int64(64)).to_numpy()
    assert got.tolist() == np.bincount(img[(mask != 0) & (img < 64)] >> 4, minlength=4).tolist() == [1, 2, 1, 0]


def test_a_strategy_that_refuses_the_expression_says_why_in_the_banner(play):
    play.expression.value = "y[j, i] = split(x[k], k -> (i, j:4))"
    play.strategy.value = "looplets"
    assert "so j must be the inner loop" in play.session.error
    assert play.explorer.error_banner.layout.display != "none"
    assert "a column-major walk of a row-major split is discordant" in text(play.explorer.error_banner.value)
    play.expression.value = "y[i] = A[i, j] * x[j] * z[j]"
    assert play.session.error is None and "z_val" in text(play.explorer.c_pane.value)
    assert play.explorer.error_banner.layout.display == "none"


def test_an_unknown_strategy_is_named():
    with pytest.raises(StrategyError, match="unknown strategy 'taco'; known: lattice, looplets"):
        Playground(SPMV, "taco")


def test_a_coordinate_list_of_one_mode_is_offered_as_one():
    from compiler.format import Format
    from compiler.levels import Element, SparseCOO
    from widgets.pickers import FormatPicker
    p = FormatPicker("v", Format(SparseCOO(1, Element(0.0))))
    assert p.levels[0].value == "SparseCOO(1)" and p.value == Format(SparseCOO(1, Element(0.0)))


def marked(picker, k=0):
    return {value for label, value in picker.levels[k].options if label.startswith("✗")}


def test_the_pickers_mark_the_levels_the_strategy_cannot_take(play):
    for strategy in ("lattice", "looplets"):
        play.strategy.value = strategy
        caps = capabilities(strategy)
        a, y = play.format_pickers["A"], play.format_pickers["y"]
        offered = {v for _, v in a.levels[1].options}
        assert marked(a, 1) == {v for v in offered if v.split("(")[0] not in caps.reads}
        assert marked(y) == {v for _, v in y.levels[0].options if v.split("(")[0] not in caps.assembles}
    assert marked(play.format_pickers["A"], 1) == set()   # the looplets read every level offered
    play.strategy.value = "lattice"
    assert marked(play.format_pickers["A"], 1) == set()   # and so does the lattice (issue 29)
    assert marked(play.format_pickers["y"]) == set()   # the lattice builds every output level (issue 29)


def test_a_level_either_strategy_now_takes_is_not_marked_and_lowers(play):
    """Since issue 29 the lattice strategy reads every level and builds every output level (some
    through a SparseList converted after the call): choosing one marks nothing and lowers."""
    play.format_pickers["y"].levels[0].value = "SparseBand"
    assert "cannot" not in play.marks.value
    assert play.session.error is None
    play.format_pickers["A"].levels[1].value = "RunList"
    assert "cannot" not in play.marks.value and play.session.error is None
    play.strategy.value = "looplets"
    assert play.session.error is None and "cannot" not in play.marks.value


def test_what_changed_after_a_format_and_a_strategy_change(play):
    play.format_pickers["A"].preset.value = "dcsr"
    changed = play.changed_pane.value
    assert "what changed: lattice: y[i] = A[i, j] * x[j] (y dense, A csr, x dense)" in text(changed)
    assert 'data-title="C" data-changed="true"' in changed
    assert 'data-title="lattice forall i" data-changed="true"' in changed
    assert "+" in text(changed) and "A0_pos" in text(changed)
    play.strategy.value = "looplets"
    changed = play.changed_pane.value
    assert 'data-title="lattices"' in changed and 'data-title="looplet nests"' in changed
    assert "only looplets: " in text(changed)


def test_copy_as_code_recreates_the_kernel_on_screen(play):
    play.strategy.value = "looplets"
    play.format_pickers["A"].preset.value = "dcsr"
    code = play.explorer.copy_as_code()
    scope = {}
    exec(code.split("\nfrom widgets import")[0], scope)
    assert scope["session"].last_artifact("c").text == play.session.last_artifact("c").text
    assert "'looplets'" in code


def test_explorer_and_compare_pickers_mark_what_their_strategy_refuses():
    from widgets import Compare, Explorer

    e = Explorer.for_program(SPMV, "lattice", A="csr", x="dense", y="dense")
    assert marked(e.format_pickers["A"], 1) == set()   # every level offered is read by the lattice since issue 29
    assert "SparseByteMap" not in marked(e.format_pickers["y"])   # built through a SparseList since issue 29
    assert "SparseByteMap" not in marked(e.format_pickers["A"], 1)
    c = Compare.for_program(SPMV, A="csr", x="dense", y="dense")
    lattice, looplets = (ctl.format_pickers["A"] for ctl in c.controls)
    assert marked(lattice, 1) == marked(looplets, 1) == set()
    lattice, looplets = (ctl.format_pickers["y"] for ctl in c.controls)
    assert marked(lattice) == marked(looplets) == set()
