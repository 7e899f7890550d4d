"""Shape operators into every output level format under the lattice strategy (issue 30; issue 29's
output levels): the sequence lowering's output (compiler/lattice/seqoutput.py) asks the output's
levels what they can do, never their arrays' names."""

import numpy as np
import scipy.sparse as sp

from compiler import array as xp
from compiler.format import Format
from compiler.levels import Dense, Element, SparseBand


def test_a_band_of_rows_is_no_sparse_list():
    # (a SparseBand's arrays, ofs and idx, look like a SparseList's pos and idx: main stored the
    # rows' entries as a list into the band's arrays, wrong values)
    a = sp.random(6, 8, 0.3, format="csr", random_state=1)
    b = sp.random(4, 8, 0.3, format="csr", random_state=2)
    fmt = Format(Dense(SparseBand(Element(0.0, dtype="float64"))))
    out = xp.concat([xp.asarray(a), xp.asarray(b)]).compute(strategy="lattice", format=fmt)
    assert out.format == fmt
    np.testing.assert_array_equal(out.to_numpy(), np.vstack([a.toarray(), b.toarray()]))
