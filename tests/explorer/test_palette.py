"""The tags' palette (explorer.palette): readable in both themes, and its colours far apart in the
order a view gives them out, by CIEDE2000 (``delta_e``), checked against published test data."""

from __future__ import annotations

import itertools

import pytest

from explorer.linking import LINK_COLOR
from explorer.palette import PALETTE, ViewColors, contrast, delta_e, lab


# (L*a*b* pairs and their CIEDE2000 difference: Sharma, Wu and Dalal's test data, pairs 1, 7, 13,
# 17, 19, 25, 34: a blue pair, a pair of greys, equal hues across the a* axis, large differences)
@pytest.mark.parametrize("a, b, want", [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.4900, -0.0010), (50.0, -2.4900, 0.0011), 7.2195),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((50.0, 2.5, 0.0), (50.0, 0.0, -2.5), 4.3065),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((6.7747, -0.2908, -2.4247), (5.8714, -0.0985, -2.2286), 0.6377),
])
def test_delta_e_matches_the_published_test_data(a, b, want):
    assert delta_e(a, b) == pytest.approx(want, abs=1e-4)
    assert delta_e(b, a) == pytest.approx(want, abs=1e-4)


def test_lab_of_the_primaries():
    assert lab("#000000") == pytest.approx((0, 0, 0), abs=1e-6)
    assert lab("#0000ff") == pytest.approx((32.30, 79.19, -107.86), abs=0.01)
    assert lab("#00ff00") == pytest.approx((87.74, -86.18, 83.18), abs=0.01)


def test_every_colour_keeps_its_contrast_in_both_themes():
    """A tag's colour stands out from JupyterLab's light page (white) and its dark one (#111) and
    keeps black text on it readable, with margin (WCAG: 3 for a marker, 4.5 for text)."""
    assert len(set(PALETTE)) == len(PALETTE) == 16
    for c in PALETTE:
        assert contrast(c, "#ffffff") >= 3.5 and contrast(c, "#111111") >= 5.3 and contrast(c, "#000000") >= 5.85, c


def closest_pair(colors) -> float:
    return min(delta_e(a, b) for a, b in itertools.combinations(colors, 2))


@pytest.mark.parametrize("k, bound", [(4, 42), (6, 26), (8, 21), (10, 16), (12, 15), (16, 13.7)])
def test_the_first_colours_a_view_gives_out_are_far_apart(k, bound):
    """The first ``k`` tags of a view get colours at least ``bound`` apart (CIEDE2000): the palette
    before gave two greens 7.8 apart (its 3rd and 10th) and a violet and a purple 8.2 apart (4th and
    8th), and its first 4 were only 20.1 apart."""
    colors = ViewColors()
    given = [colors.color(f"t{n}") for n in range(k)]
    assert closest_pair(given) >= bound, (k, given)


def test_no_tag_colour_looks_like_the_link_colour():
    """A clicked node is filled in the link colour: no tag's colour may be taken for it."""
    assert min(delta_e(c, LINK_COLOR) for c in PALETTE) >= 15


def test_each_colour_is_a_colour_not_a_grey():
    """A grey would read as an uncoloured part: every colour has CIE chroma 30 or more."""
    for c in PALETTE:
        _, a, b = lab(c)
        assert (a * a + b * b) ** 0.5 >= 30, c
