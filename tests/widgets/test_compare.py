"""Compare.for_program of a loop program (issue 31): the output a loop program indexes by a computed
coordinate keeps the shape of the array given for it in both columns (before, both failed with
"cannot size bins", as Explorer.for_program did before it passed the shapes on)."""

import numpy as np

from compiler.looplets.histogram import histogram_program
from widgets import Compare
from widgets.compare import DRAWING_CAP


def test_for_program_of_a_histogram_keeps_the_bins_shape_in_both_columns():
    img, mask = np.array([[1, 17, 40, 63, 2], [5, 33, 60, 0, 9]]), np.array([[1, 1, 1, 1, 0], [0, 1, 1, 1, 1]], bool)
    c = Compare.for_program(histogram_program("shift"), ("looplets", "looplets"), bins=np.zeros(4, np.int64),
                            img=img, mask=mask, shift=np.int64(4), top=np.int64(64))
    assert all("failed" not in h.value for h in c.headers), [h.value for h in c.headers]
    assert all("bins_val" in p.value for p in c.c_panes)
    want = np.bincount(img[mask] >> 4, minlength=4)
    for side in range(2):
        out = c._data_run(side)().to_numpy()
        assert out.shape == (4,)
        np.testing.assert_array_equal(out, want)


def test_for_program_gives_each_column_the_shape_of_its_own_array():
    # a tensor given as a pair has one array per side: 8 bins of a 3-bit shift on the right
    img, mask = np.array([[1, 17, 40, 63]]), np.array([[1, 1, 1, 1]], bool)
    c = Compare.for_program(histogram_program("shift"), "looplets",
                            bins=(np.zeros(4, np.int64), np.zeros(8, np.int64)), img=img, mask=mask,
                            shift=(np.int64(4), np.int64(3)), top=np.int64(64))
    assert all("failed" not in h.value for h in c.headers), [h.value for h in c.headers]


def test_a_step_before_any_drawing_of_the_chosen_kind_shows_the_latest_drawing():
    """At the parse step neither column has a lattice or a looplet nest to draw: each shows the
    parse step's expression tree, saying so (it was an empty box), and its C pane, holding a line
    of program, is no longer fixed at 420 px (it grows with its C up to that)."""
    c = Compare.for_program("y[i] = A[i, j] * x[j]", A="csr", x="dense")
    c.stage_slider.value = 0
    for side, kind in enumerate(("lattice", "looplet-nest")):
        assert c.step_of(side) == 0
        drawing = c.artifact_panes[side].value
        assert 'data-kind="notation-tree"' in drawing and "<svg" in drawing, drawing[:300]
        assert f"no {kind} up to step 0; the drawing of step 0 (parse)" in drawing
        assert c.c_panes[side].layout.height is None and c.c_panes[side].layout.max_height == "420px"
        # (nor its drawing pane: it grows with its drawings, the browser test measures how tall)
        assert c.artifact_panes[side].layout.height is None and c.artifact_panes[side].layout.max_height == DRAWING_CAP
    c.stage_slider.value = c.stage_slider.max   # (drawings of the kind: those, as before)
    assert all('data-kind="notation-tree"' not in p.value and "<svg" in p.value for p in c.artifact_panes)
