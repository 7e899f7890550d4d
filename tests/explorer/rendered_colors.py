"""The colours a rendered view gave its tags, read from its HTML (its ``data-colors``), for the
tests that check a part is drawn in its tag's colour: a view assigns them (explorer.palette)."""

from __future__ import annotations

import html as _html
import json
import re


def view_colors(html: str) -> dict[str, str]:
    """``{tag: colour}`` of the first view in ``html``.

    >>> view_colors('<div class="step" data-colors="{&quot;t&quot;: &quot;#e16306&quot;}">')
    {'t': '#e16306'}
    """
    return json.loads(_html.unescape(re.search(r'data-colors="([^"]*)"', html).group(1)))
