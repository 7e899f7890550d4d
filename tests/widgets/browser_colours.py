"""The ``[A; B] x`` array expression the colour tests draw, and a page in JupyterLab's own theme
stylesheet: helpers of the browser tests of provenance colours (test_browser_colours.py,
test_browser_export.py)."""

from __future__ import annotations

import pathlib


def stacked_spmv_kernel():
    """``y = [A; B] x`` as an array expression, lowered by the looplets into the front end's choice of
    output, a dense vector: its array step draws 7 boxes (``A``, ``B``, the concat, ``x``, its
    broadcast, the product and the sum)."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp

    A, B = (sp.random(n, 5, density=0.4, format="csr", random_state=k) for k, n in enumerate((6, 4)))
    expr = xp.concat([ss.asarray(A, name="A"), ss.asarray(B, name="B")], axis=0) @ ss.asarray(np.arange(5.0), name="x")
    kernel = ss.lower(expr, strategy="looplets")
    assert np.allclose(kernel().to_numpy(), np.vstack([A.toarray(), B.toarray()]) @ np.arange(5.0))
    return kernel


def one_colour_per_tag(nodes: list[dict]) -> int:
    """How many colours ``nodes`` (:data:`browser_measure.TAG_COLOURS_JS`'s) are drawn in, checking
    that two nodes share a colour exactly where they share their tag."""
    pairs = {(n["tag"], n["fill"]) for n in nodes}
    assert len(pairs) == len({t for t, _ in pairs}) == len({f for _, f in pairs}), sorted(pairs)
    return len(pairs)


def themed_page(theme: str, body: str) -> str:
    """``body`` on a page styled by JupyterLab's own theme stylesheet (``light`` or ``dark``, from
    the installed package), its background and text the theme's, as a notebook shows a widget."""
    import jupyterlab

    css = (pathlib.Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab" / f"theme-{theme}-extension"
           / "index.css").read_text()
    return (f"<style>{css}\nbody {{ background: var(--jp-layout-color0); color: var(--jp-content-font-color1); "
            f"font: 13px sans-serif; }}</style>{body}")


def exported_step(page, trace, path, at: int):
    """``trace`` exported to ``path`` and opened in ``page`` at step ``at``: that step's section, shown."""
    from explorer import export_html
    export_html(trace, path)
    page.goto(f"{path.as_uri()}#step-{at}")
    section = page.locator(f"section#step-{at}")
    section.wait_for(state="visible")
    return section
