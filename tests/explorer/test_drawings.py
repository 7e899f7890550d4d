"""The drawings' nodes in their tags' colours, the lowered looplet outlined (explorer.drawings)."""

import re

from explorer.drawings import FOCUS_COLOR, render_dot
from explorer.provenance import Provenance, TagInfo


def _shapes(svg: str) -> dict[str, str]:
    """``{node name: its first shape's tag}``."""
    return {m.group(1): m.group(2) for m in re.finditer(
        r'<title>(n\d)</title>.*?(<(?:polygon|ellipse|path)[^>]*>)', svg, re.S)}


def test_the_lowered_looplet_keeps_its_tags_colour_outlined_in_the_focus_colour():
    """A focused node that a tag names keeps the tag's fill and is outlined in the focus colour (its
    one stroke: Graphviz's black one is dropped); a focused node no tag names is filled in the focus
    colour; the rest keep a stroke of 2 in the theme's colour."""
    prov = Provenance({"looplet:Stepper:4": [3], "looplet:Spike:5": [4]},
                      {"looplet:Stepper:4": TagInfo("looplet:Stepper:4", "looplet", "j", ("A",), "Stepper"),
                       "looplet:Spike:5": TagInfo("looplet:Spike:5", "looplet", "j", ("A",), "Spike")}).for_view()
    dot = 'digraph { n0 [label="Stepper(stop=j + 1)"]; n1 [label="Spike"]; n2 [label="Lookup"] }'
    shapes = _shapes(render_dot(dot, highlight=["Stepper", "Lookup"], provenance=prov))
    stepper, spike, lookup = shapes["n0"], shapes["n1"], shapes["n2"]
    assert f'fill="{prov.color("looplet:Stepper:4")}"' in stepper and stepper.count("stroke=") == 1
    assert f'stroke="{FOCUS_COLOR}" stroke-width="5"' in stepper
    assert f'fill="{prov.color("looplet:Spike:5")}"' in spike and 'stroke="currentColor"' in spike
    assert f'fill="{FOCUS_COLOR}"' in lookup and f'stroke="{FOCUS_COLOR}"' in lookup
