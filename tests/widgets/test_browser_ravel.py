"""A reduction of every entry of a CSR matrix by the looplets (compiler/looplets/flat_reductions.py) as the
exported explorer page shows it, in headless Chromium, under a light and a dark preference: its ``ravel``
step, opened from the step list, shows the two loops over the rows and the columns becoming one loop over
the raveled entries, readable, and the C the one walk over all the stored values."""

from __future__ import annotations

import pathlib

from browser_measure import assert_readable, measure, screenshot


def test_a_flat_reductions_ravel_step_reads_in_both_themes(browser, tmp_path, artifacts):
    import numpy as np

    import compiler as ss
    from explorer import export_html

    M = np.array([[0.0, -3.0, 0.0], [-1.0, 0.0, -2.0]])
    A = ss.Tensor.from_numpy(M, "csr", name="A")
    kernel = ss.lower("s[] = max[i, j](A[i, j])", strategy="looplets", A=A)
    assert kernel(A=A).to_numpy() == 0.0
    at = next(k for k, s in enumerate(kernel.trace.steps) if s.stage == "ravel")
    path = tmp_path / "ravel.html"
    export_html(kernel.trace, path)
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1100, "height": 800}, color_scheme=scheme)
        page.goto(pathlib.Path(path).as_uri())
        link = page.locator(f'nav.steps a[href="#step-{at}"]')
        assert "ravel" in link.inner_text()
        link.click()
        section = page.locator(f"section#step-{at}")
        section.wait_for(state="visible")
        where = f"the ravel step ({scheme})"
        screenshot(page, artifacts / f"flat_reduction_ravel_{scheme}.png", full_page=True)
        m = measure(section)
        assert_readable(m, where)
        assert m["tcount"] >= 20, (where, m["tcount"])   # (the program, its diff and the C were measured)
        # each of the step's texts shown whole: no program, diff or C box cut short of its lines
        cut = section.evaluate("""(root) => [...root.querySelectorAll('pre')].filter(p => p.getClientRects().length &&
            p.scrollHeight > p.clientHeight + 1 && !['auto', 'scroll'].includes(getComputedStyle(p).overflowY))
            .map(p => p.innerText.slice(0, 40))""")
        assert not cut, (where, cut)
        text = section.inner_text()
        # the loops before and after, as the step's program shows them, in the section's visible text
        assert "for i_j = 0:A0_size * A1_size" in text and "ravel(A)[i_j]" in text, (where, text[:800])
        assert "for j = _" in text, (where, text[:800])
        page.close()
