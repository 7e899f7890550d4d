"""The C an exported page shares between its steps (explorer/sharedc.py), in headless Chromium: written once,
each step's copy filled and painted by the page's script renders as the C the notebook's view writes out whole
for that step (explorer.renderers.kernel_c): each line's background, text colour, focus bar, box, tags and
tooltip, each token's colour, weight and slant, in the light and the dark preference."""

from __future__ import annotations

import pytest

# Each C line of each step's pane under ``sel``: what it shows, as computed by the browser.
LINES_JS = r"""
(sel) => [...document.querySelectorAll(sel)].map(pane => [...pane.querySelectorAll('span.ln')].map(l => {
  const st = getComputedStyle(l);
  const tip = l.getAttribute('title') || (l.hasAttribute('data-tip') ? SS_TIPS[+l.getAttribute('data-tip')] : '');
  const tokens = [...l.querySelectorAll('span')].map(t => {
    const c = getComputedStyle(t);
    return [t.textContent, c.color, c.fontWeight, c.fontStyle, c.userSelect];
  });
  return {line: l.getAttribute('data-line'), background: st.backgroundColor, color: st.color, bar: st.boxShadow,
          box: st.display + ' ' + st.padding, focus: l.classList.contains('ss-focus'),
          tags: l.getAttribute('data-tags'), tip: tip, text: l.textContent, tokens: JSON.stringify(tokens)};
}))
"""


@pytest.mark.parametrize("strategy", ["looplets", "lattice"])
def test_each_steps_shared_c_renders_as_the_views_own(browser, tmp_path, artifacts, strategy):
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from explorer import export_html
    from explorer.renderers import kernel_c, render_step
    from explorer.session import explore

    a, b = (sp.random(6, 5, density=0.4, format="csr", random_state=k) for k in range(2))
    kernel = ss.lower(xp.asarray(a) * 2 + xp.asarray(b), strategy=strategy)
    np.testing.assert_allclose(kernel().to_numpy(), a.toarray() * 2 + b.toarray())
    page_html = export_html(kernel.trace)
    # (the kernel's C written once, each step's pane filled from it)
    c_text = kernel.trace.find("emit-c")[0].artifacts[0].text
    assert page_html.count("<template ") == 1 and page_html.count("data-ss-c=") >= 5, page_html.count("data-ss-c=")
    # the notebook view's own C of each step, as it writes it out (its colours made step by step as the page's)
    session = explore(kernel.trace)
    prov = session.provenance()
    own = []
    for i in range(len(session.steps)):
        view = prov.for_view()
        render_step(session.step(i), provenance=view)
        own.append(f'<div class="own">{kernel_c(session, i, view)}</div>')
    assert sum(bool(k.split(">", 1)[1][:-6]) for k in own) >= 5, "too few steps show the C to compare"
    # (beside the page's steps, under the same CSS: the page's own C panes and the view's)
    path = tmp_path / "shared.html"
    path.write_text(page_html.replace("</main>", "</main>" + "".join(own)))
    for scheme in ("light", "dark"):
        page = browser.new_page(viewport={"width": 1100, "height": 900}, color_scheme=scheme)
        page.goto(path.as_uri())
        shared = page.evaluate(LINES_JS, "section.step div.c-section pre[data-ss-c]")
        wanted = page.evaluate(LINES_JS, "div.own div.c-section pre")
        assert len(shared) == len(wanted) >= 5, (len(shared), len(wanted))
        assert sum(map(len, shared)) > 5 * len(c_text.splitlines()) - 5
        for k, (got, want) in enumerate(zip(shared, wanted)):
            assert got == want, (scheme, k, next((g, w) for g, w in zip(got, want) if g != w))
        # (painted: some lines in a tag's colour, dark text on it, and a focus bar where a looplet is lowered)
        lines = [x for pane in shared for x in pane]
        assert any(x["background"] != "rgba(0, 0, 0, 0)" and x["color"] == "rgb(0, 0, 0)" for x in lines)
        if strategy == "looplets":
            assert any(x["focus"] and x["bar"] != "none" for x in lines)
        page.locator("section.step.current").screenshot(path=str(artifacts / f"shared-c-{strategy}-{scheme}.png"))
        page.close()
