"""A merged union's loop (compiler/lattice/seqmerge.py) as the exported explorer page shows it, in
headless Chromium, under a light and a dark preference: its lattice's one point and its CFIR loop
say "until all ran out" inside their boxes, the legend says what that means, and its rewrite reads
on one line."""

from __future__ import annotations

import re

import pytest
from browser_measure import REWRITES_JS, assert_rewrites_read, exported_steps

# The legend's terms shown under the drawings of the section, each with whether its box lies
# inside the section's width (a legend cut at the page's edge hides its meaning).
LEGEND_TERMS_JS = r"""
(root) => [...root.querySelectorAll('.ss-legend code')].filter(c => c.getClientRects().length).map(c => {
  const r = c.parentElement.getBoundingClientRect(), room = root.getBoundingClientRect();
  return {term: c.textContent, inside: r.left >= room.left - 1 && r.right <= room.right + 1};
})
"""


@pytest.mark.parametrize("form", ["hstack", "ravel", "split", "one-case"])
def test_a_merged_loop_says_it_runs_until_all_ran_out(browser, tmp_path, artifacts, form):
    """``hstack`` of three COO matrices lowered by the lattices is one loop over the rows, merged (and the ravel
    of that hstack, one loop over its parts' row walks, whose long sequence the boxes wrap):
    the lattice step draws one point, labelled with its sequence and "until all ran out" on a line
    of its own inside its box (the loop's box in the CFIR cut its one line at 40 characters, to
    "until all …"), the CFIR's loop box the same, each legend explains the words, and the
    ``merged-union`` rewrite keeps each cell on one line; every label inside its shape and
    readable, in the light and the dark preference. The reshape of that hstack into rows of 3 (``split``) merges
    its loop over the rows' groups and the one in each (``merged-split``): the first shows as the union's. The
    cross product of two COO matrices with a NaN stored, whose lattice's cases are one statement (``one-case``),
    shows as a merged union's."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    from compiler import array as xp
    from explorer import export_html

    mats = [sp.random(5, 3, density=0.4, format="coo", random_state=k) for k in range(3)]
    stacked = xp.concat([ss.asarray(m, name=n) * 2 for m, n in zip(mats, "ABC")], axis=1)
    want = np.hstack([m.toarray() * 2 for m in mats])
    if form == "ravel":
        stacked, want = xp.reshape(stacked, (-1,)), want.reshape(-1)
    if form == "split":
        stacked, want = xp.reshape(stacked, (15, 3)), want.reshape(15, 3)
    if form == "one-case":
        with np.errstate(all="ignore"):
            dense = [np.where(m.toarray() == 0, 0.0, m.toarray() - 0.5) for m in mats[:2]]
            dense[0][1, 2] = np.nan
            stacked = xp.linalg.cross(*(ss.asarray(sp.coo_matrix(d), name=n) for d, n in zip(dense, "AB")))
            want = np.cross(*dense)
    rule = {"split": "merged-split", "one-case": "one-case"}.get(form, "merged-union")
    kernel = ss.lower(stacked, strategy="lattice")
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(kernel().to_numpy(), want)
    trace = kernel.trace
    merged = [k for k, s in enumerate(trace.steps) if any(r.rule == rule for r in s.rewrites)]
    lattice = next(k for k in merged if trace.steps[k].stage == "lattice")
    cfir = next(k for k in merged if trace.steps[k].stage == "cfir")
    path = tmp_path / "merged.html"
    export_html(trace, path)
    seq = _merged_sequence(trace.steps[cfir])
    wants = {"seq-lattice": [f"0: {seq}", "until all ran out"], "seq-cfir": [f"while i <- {seq}", "until all ran out"]}
    for kind, section, nodes, where in exported_steps(browser, path, ((lattice, "seq-lattice"), (cfir, "seq-cfir")),
                                                      "the merged loop",
                                                      lambda k, s: artifacts / f"merged-{form}-{k}-{s}.png"):
        want = wants[kind]
        assert_rewrites_read(section.evaluate(REWRITES_JS), where)
        # (a split's loop inside, over j, is merged too: the box of the loop over i)
        head = " ".join(want[0].split()[:2]) if kind == "seq-cfir" else want[0].split()[0]
        boxes = [n for n in nodes if n["lines"][-1:] == want[1:] and n["lines"][0].startswith(head)]
        assert len(boxes) == 1, (where, want, [n["lines"] for n in nodes])
        box = boxes[0]
        # (a long sequence wrapped over lines of its box, read as one; or, in the CFIR's tree, cut where its
        # box would be wider than the page, ending in "…", whole in its tooltip, as the legend says)
        shown = _unwrapped(box["lines"][:-1])
        assert shown == _unwrapped([want[0]]) or shown.endswith("…") and len(box["lines"]) == 2 and \
            _unwrapped([want[0]]).startswith(shown[:-1]) and want[0] in box["tip"], (where, want, box)
        if kind == "seq-lattice":   # (one point: no lattice point per set of operands present)
            assert len(nodes) == 1, (where, nodes)
        # (a label cut elsewhere only where its box would pass the page's width, whole in its tooltip: the split's
        # loop over j, whose sequence is as long as the loop's over i)
        cut = [(line, n["tip"]) for n in nodes if n is not box for line in n["lines"] if line.endswith("…")]
        assert not [c for c in cut if form not in ("split", "one-case") or not (c[1] and _unwrapped([c[1]]).find(
            _unwrapped([c[0][:-1]])) >= 0 and len(c[0]) > 30)], (where, nodes)
        if form == "hstack" or kind == "seq-lattice":
            assert not box["lines"][0].endswith("…"), (where, box)
        terms = section.evaluate(LEGEND_TERMS_JS)
        assert {"term": "until all ran out", "inside": True} in terms, (where, terms)
        assert section.locator("pre.code").filter(has_text=re.compile("until all ran out")).count(), where


def _merged_sequence(step) -> str:
    """The sequence of the merged loop of a ``cfir`` step, as its text prints it."""
    head = next(line for line in step.after_text.splitlines() if "until all ran out" in line)
    return head.split(" <- ", 1)[1].split(" until all ran out")[0].split(" [")[0].strip()


def _unwrapped(lines) -> str:
    """Text lines of a box, read as one: the spaces a wrap put or took at line ends do not count."""
    return re.sub(r"\s+", "", "".join(lines))
