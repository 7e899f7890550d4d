"""Compare.for_program of a loop program (issue 31): the output a loop program indexes by a computed
coordinate keeps the shape of the array given for it in both columns (before, both failed with
"cannot size bins", as Explorer.for_program did before it passed the shapes on)."""

import numpy as np

from compiler.looplets.histogram import histogram_program
from widgets import Compare


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
