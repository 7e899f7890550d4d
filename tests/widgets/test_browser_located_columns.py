"""A column located in its row by the lattice (compiler/lattice/seqlocated.py) as the exported explorer page shows
it, in headless Chromium, under a light and a dark preference: ``linalg.cross`` of two CSR matrices, whose
derivation says of each column that it is located in its row and constrains nothing (each label inside its
node's box), whose lattice over the rows is one point, and whose CFIR reads each column at the loop's index."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from browser_measure import REWRITES_JS, assert_rewrites_read, exported_steps


@pytest.mark.parametrize("fmt", ["csr", "coo"])
def test_a_located_column_reads_in_its_derivation_lattice_and_cfir(browser, tmp_path, artifacts, fmt):
    """Of two COO matrices, each column is located in the row its matrix's walk of rows is at: the derivation says
    so of each column, in a rule short enough that the table of rewrites shows its before-and-after column in its
    box, and the lattice over the rows is their intersection, one point."""
    import compiler as ss
    from compiler import array as xp
    from explorer import export_html

    A, B = (sp.random(6, 3, density=0.5, format=fmt, random_state=k) for k in (1, 2))
    kernel = ss.lower(xp.linalg.cross(ss.asarray(A, name="A"), ss.asarray(B, name="B")), strategy="lattice")
    np.testing.assert_array_equal(kernel().to_numpy(), np.cross(A.toarray(), B.toarray()))
    steps = kernel.trace.steps
    derive = next(k for k, s in enumerate(steps) if s.stage == "seq-derive")
    rows = next(k for k, s in enumerate(steps) if s.stage == "lattice" and s.note.startswith("forall i"))
    cfir = next(k for k, s in enumerate(steps) if s.stage == "cfir")
    path = tmp_path / "located.html"
    export_html(kernel.trace, path)
    shown = ((derive, "seq-derivation"), (rows, "seq-lattice"), (cfir, "seq-cfir"))
    for kind, section, nodes, where in exported_steps(browser, path, shown, "the cross product",
                                                      lambda k, s: artifacts / f"located-{fmt}-{k}-{s}.png"):
        text = [" ".join(n["lines"]) for n in nodes]
        if kind == "seq-derivation":
            # (each of the six columns, in each part that reads it, says where it is located: of a CSR at each row,
            # constraining nothing; of a COO in the row its walk of the first level is at)
            said = "located in its row" if fmt == "csr" else "located in the row level 0 of"
            located = [t for t in text if said in t.replace("- ", "")]
            assert len(located) == 12, (where, text)
            assert all("constrains nothing" in t if fmt == "csr" else "walks" in t for t in located), (where, text)
            tables = section.evaluate(REWRITES_JS)
            assert_rewrites_read(tables, where)
            # (the rules' column leaves the before-and-after column in view: no rule pushes it past the box)
            assert all(0 < t["rules"] < 0.75 * t["box"] for t in tables), (where, tables)
        elif kind == "seq-lattice":
            # (one point, every row, and where it runs out: no loop; of two COO matrices the rows of both)
            want = "0: U_i#k" if fmt == "csr" else "0: i_A ∩ i_B"
            assert [t for t in text if t[:1].isdigit()] == [want], (where, text)
        else:
            assert any("A_i_1(i)" in t.replace(" ", "") or "A_i_1(i" in t for t in text) or \
                section.locator("pre.code").filter(has_text="A_i_1(i)").count(), (where, text)
