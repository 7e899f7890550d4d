"""Boxes of one drawing that share a colour, named under it (explorer.sharedcolours)."""

from __future__ import annotations

from compiler.trace import Artifact
from explorer.provenance import Provenance
from explorer.renderers import render_artifact
from explorer.sharedcolours import shared_colour_groups, shared_colours_html

DOT = 'digraph { n0 [label="mul\\n(4,) f8"]; n1 [label="x"]; n2 [label="broadcast"]; n3 [label="y"]; n0 -> n1 }'


def tree(node_tags, nodes=()):
    return Artifact("array-expression", "e", "", dot=DOT, data={"node_tags": node_tags, "nodes": list(nodes)})


def test_no_entry_where_every_box_has_a_colour_of_its_own():
    art = tree({"n0": ["t0"], "n1": ["t1"], "n2": ["t2"]})
    prov = Provenance({"t0": [1], "t1": [2], "t2": [3]}).for_view()
    assert shared_colour_groups(art, prov) == [] and shared_colours_html(art, prov) == ""
    assert "ss-shared-colour" not in render_artifact(art, provenance=prov)


def test_boxes_coloured_by_one_tag_are_named_with_what_they_became():
    """A box takes the colour of the first of its tags the provenance knows (``t9`` is of no C
    line): ``n1`` and ``n2`` are both ``t1``'s, so one entry names both, in ``t1``'s colour."""
    nodes = [{"id": "n1", "notation": "x[j]"}, {"id": "n2", "notation": "x[j]"}]
    art = tree({"n0": ["t0"], "n1": ["t1"], "n2": ["t9", "t1"]}, nodes)
    prov = Provenance({"t0": [1], "t1": [2]}).for_view()
    html = render_artifact(art, provenance=prov)
    assert shared_colour_groups(art, prov) == [("t1", ["broadcast", "x"], "x[j]")]
    assert html.count('class="ss-shared-colour"') == 1 and f"background:{prov.color('t1')}" in html
    assert "<code>broadcast</code> and <code>x</code>" in html and "both became <code>x[j]</code>" in html


def test_three_boxes_and_boxes_that_became_different_code():
    nodes = [{"id": "n1", "notation": "x[j]"}, {"id": "n2", "notation": "x[k]"}, {"id": "n3", "notation": "x[j]"}]
    art = tree({"n1": ["t1"], "n2": ["t1"], "n3": ["t1"]}, nodes)
    prov = Provenance({"t1": [2]}).for_view()
    assert shared_colour_groups(art, prov) == [("t1", ["broadcast", "x", "y"], "")]
    html = shared_colours_html(art, prov)
    assert "all 3 became the same code" in html and "a click on any, or on this line, outlines all 3" in html


def test_a_drawing_without_tags_or_provenance_has_no_entry():
    assert shared_colour_groups(Artifact("array-expression", "e", "", dot=DOT), {"t": [1]}) == []
    assert shared_colour_groups(tree({"n1": ["t1"], "n2": ["t1"]}), None) == []
