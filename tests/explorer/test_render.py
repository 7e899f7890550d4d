import pytest

from explorer import RenderError, dot_to_svg
from explorer.graphviz_setup import dot_binary


def test_dot_binary_is_configured_for_graphviz_package():
    from graphviz.backend import dot_command

    path = dot_binary()
    assert path.exists()
    assert dot_command.DOT_BINARY == path


def test_dot_to_svg_draws_nodes_and_labels():
    svg = dot_to_svg('digraph { A_pos [label="pos"]; A_pos -> A_idx }')
    assert "<svg" in svg
    assert ">pos<" in svg and ">A_idx<" in svg


def test_dot_syntax_error_is_reported_not_crashing():
    with pytest.raises(RenderError, match="Graphviz could not draw"):
        dot_to_svg("digraph { a -> }")
