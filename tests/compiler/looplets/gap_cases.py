"""The hypothesis cases of the gap-folding tests (test_idempotent_gaps, test_counted_gaps): a reduction of a matrix
of random shape, format, density and fill, NaN and ±inf among its stored values too.

>>> isinstance(reductions(["y[j] = max[i](A[i, j])"], ["csr"]), st.SearchStrategy)
True
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

INF, NAN = float("inf"), float("nan")
VALUES = st.sampled_from([0.0, 1.5, -2.0, 7.0, INF, -INF, NAN])


def reductions(programs: list, formats: list):
    """``(program, fill, matrix, format)``: one of ``programs`` over a matrix of up to 6 x 6 in one of ``formats``."""
    @st.composite
    def cases(draw):
        m, n = draw(st.integers(0, 6)), draw(st.integers(1, 6))
        fill = draw(st.sampled_from([0.0, -1.0, 3.0, INF, -INF, NAN]))
        density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
        cells = draw(st.lists(st.tuples(st.floats(0, 1), VALUES), min_size=m * n, max_size=m * n))
        M = np.array([fill if p >= density else v for p, v in cells], dtype=float).reshape(m, n)
        return draw(st.sampled_from(programs)), fill, M, draw(st.sampled_from(formats))
    return cases()
