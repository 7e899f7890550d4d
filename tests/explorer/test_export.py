from html.parser import HTMLParser

import pytest

from explorer import explore, export_html
from explorer.examples import build_broken, spmv_trace
from explorer.export import export_text, external_urls


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.sections, self.buttons, self.scripts, self.svgs, self.attrs = [], [], 0, 0, []
        self.links = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.attrs.extend(v for _, v in attrs if v)
        if tag == "section" and "step" in (a.get("class") or ""):
            self.sections.append(a["id"])
        if tag == "button":
            self.buttons.append(a.get("id"))
        if tag == "script":
            self.scripts += 1
            assert "src" not in a
        if tag == "svg":
            self.svgs += 1
        if tag == "link":
            self.links.append(a)


@pytest.fixture(scope="module")
def trace():
    return spmv_trace()


def test_export_is_self_contained_with_one_section_per_step(trace, tmp_path):
    out = tmp_path / "trace.html"
    page = export_html(trace, out)
    assert out.read_text() == page
    p = _Collect()
    p.feed(page)
    assert p.sections == [f"step-{i}" for i in range(len(trace))]
    assert {"prev", "next"} <= set(p.buttons) and p.scripts == 1 and p.links == []
    assert p.svgs >= 2  # the fiber trees of A and x
    assert "http://" not in page and "https://" not in page and external_urls(page) == []
    assert not any(v.startswith(("http:", "https:", "//")) for v in p.attrs)
    assert "keydown" in page and "ArrowRight" in page


def test_export_of_a_failed_session_opens_at_the_failure():
    page = export_html(explore(build_broken))
    assert "lowering failed at step 2" in page and 'class="failed"' in page
    assert "show(m ? parseInt(m[1], 10) : 2)" in page


def test_export_text(trace):
    text = export_text(trace)
    assert text.count("== step") == len(trace)
    assert "-- fiber-tree: A" in text and "spmv" in text


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_export_of_a_real_lowering_marks_the_program_parts(strategy):
    import html
    import json
    import re

    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from explorer.palette import PALETTE

    S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    kernel = ss.lower("y[i] = A[i, j] * x[j]", strategy=strategy,
                      A=ss.Tensor.from_scipy(S, name="A"), x=np.arange(5.0))
    session = explore(kernel.trace)
    page = export_html(session)
    prov = session.provenance()
    assert prov and external_urls(page) == []
    p = _Collect()
    p.feed(page)
    assert p.sections == [f"step-{i}" for i in range(len(session))] and p.links == []
    # one legend button per tag; each step gives the tags it shows distinct colours (its
    # data-colors), which the page's script puts on the buttons when the step shows
    for tag in prov:
        assert f'<button data-tag="{tag}" ' in page
    for colors in re.findall(r'<section class="step" id="step-\d+" data-index="\d+" data-colors="([^"]*)"', page):
        colors = json.loads(html.unescape(colors))
        assert set(colors) <= set(prov) | {t for t in colors if t.startswith("shape:")}, colors
        assert len(set(colors.values())) == len(colors) or len(colors) > len(PALETTE), colors
    # the program of the first step (the parsed expression) has coloured parts
    first = page.split('id="step-0"', 1)[1].split('id="step-1"', 1)[0]
    parts = re.findall(r'<span class="pv" data-tags="([^"]*)"', first)
    assert parts and all(set(g.split()) <= set(prov) for g in parts)
    # every data-tags in the page names known tags (clicking one selects a legend button)
    for group in re.findall(r'data-tags="([^"]*)"', page):
        assert set(group.split()) <= set(prov), group
    assert "closest('[data-tags]')" in page and "selectTag" in page
