import time

import numpy as np
import pytest

import compiler as ss
from explorer.examples import build_broken, build_spmv, spmv_example, spmv_trace
from widgets import LEVELS, Compare, Explorer, FormatPicker


def text(html: str) -> str:
    """The visible text of some HTML (tags dropped, entities decoded)."""
    import html as h
    import re

    return h.unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture(scope="module")
def trace():
    return spmv_trace()


def test_next_prev_change_the_panes(trace):
    e = Explorer(trace)
    assert e.index == 0 and "parse" in e.header.value
    assert "y[i] = sum[j](A[i, j] * x[j])" in text(e.program_pane.value)
    first = (e.program_pane.value, e.artifact_pane.value)
    e.next_button.click()
    assert e.index == 1 and "inputs" in e.header.value
    assert "<svg" in e.artifact_pane.value and e.artifact_pane.value != first[1]
    e.next_button.click()
    assert e.index == 2 and "kernel spmv" in text(e.program_pane.value)
    # index notation in, IR out: the pane shows the input and says so, no diff across the two
    assert "input of imperative" in e.diff_title.value and "imperative IR" in e.diff_title.value
    assert "y[i] = sum" in text(e.diff_pane.value) and "+kernel" not in text(e.diff_pane.value)
    assert e.program_pane.value != first[0]
    assert "showing step 1" in e.artifact_pane.value  # the latest drawing stays in view
    e.prev_button.click()
    assert e.index == 1
    e.slider.value = e.slider.max
    assert e.index == 4 and "compile" in e.header.value
    assert "A_pos[i + 1]" in text(e.c_pane.value)
    e.next()  # at the end it stays
    assert e.index == 4


def test_filter_and_hide_unchanged_reduce_steps(trace):
    e = Explorer(trace)
    assert e.slider.max == 4
    e.hide_unchanged.value = True
    assert e.visible == [0, 1, 2, 3] and e.slider.max == 3
    e.filter.value = "stage:emit-c"
    assert e.visible == [3] and e.slider.max == 0 and e.index == 3
    assert "emit-c" in e.header.value
    e.filter.value = ""
    e.hide_unchanged.value = False
    assert e.slider.max == 4
    labels = [label for label, _ in e.filter.options]
    assert "stage parse" in labels and "stage compile" in labels


def test_error_banner_and_timeline_at_failing_step():
    e = Explorer(build_broken)
    assert e.error_banner.layout.display != "none"
    assert "lowering failed at step 2" in e.error_banner.value and "SparseBand" in e.error_banner.value
    assert e.index == 2 and e.slider.value == 2
    assert "sum[j](A[i, j]" in text(e.program_pane.value)  # the IR where it stopped
    assert "no C yet" in e.c_pane.value
    ok = Explorer(build_spmv)
    assert ok.error_banner.layout.display == "none"


def test_copy_as_code_recreates_the_session():
    e = Explorer(build_spmv)
    e.copy_button.click()
    code = e.code.value
    assert "from explorer.examples import build_spmv" in code and "Explorer(session)" in code
    ns = {}
    exec(code.replace("Explorer(session)", "w = Explorer(session)"), ns)
    assert ns["session"].stages() == e.session.stages()


def test_redraw_is_cached_and_timed(trace, capsys):
    e = Explorer(trace)
    times = []
    for _ in range(2):  # first pass renders, second pass comes from the cache
        e.slider.value = 0
        for _ in range(len(trace) - 1):
            t0 = time.perf_counter()
            e.next()
            times.append(time.perf_counter() - t0)
    with capsys.disabled():
        print(f"\nredraw per step: first pass max {max(times[:4]) * 1e3:.1f} ms, "
              f"cached max {max(times[4:]) * 1e3:.1f} ms")
    assert len(e._cache) == len(trace)


def test_provenance_selector():
    t = ss.Trace()
    c = "void k(void) {\n  a();\n  b();\n}"
    t.record("lattice", artifacts=[ss.Artifact("lattice", "L", "p0 p1", dot="digraph { p0; p1 }",
                                               data={"provenance": {"p0": [2], "p1": [3]}})])
    t.record("emit-c", after=c, artifacts=[ss.Artifact("c", "k", c)])
    e = Explorer(t)
    assert e.provenance.layout.display != "none"
    assert [v for _, v in e.provenance.options] == ["", "p0", "p1"]
    assert 'data-line="2" style="background' in e.c_pane.value
    e.provenance.value = "p1"
    assert 'data-line="2" style="background' not in e.c_pane.value
    assert 'data-line="3" style="background' in e.c_pane.value
    plain = Explorer(spmv_trace())
    assert plain.provenance.layout.display == "none"


def test_pickers_only_with_rebuild_and_relower():
    plain = Explorer(build_spmv, formats={"A": "csr"})
    assert plain.format_pickers == {}
    calls = []

    def rebuild(formats, schedule):
        calls.append((formats, schedule))
        if formats["A"] == ss.coo():
            err = ss.FormatError("SparseCOO cannot serve this strategy")
            partial = ss.Trace()
            ss.parse("y[i] = A[i, j] * x[j]", trace=partial)
            err.trace = partial
            raise err
        return spmv_trace()

    e = Explorer(build_spmv, rebuild=rebuild, formats={"A": "csr", "x": "dense"}, ndims={"x": 1},
                 schedule="", auto_relower=False)
    assert set(e.format_pickers) == {"A", "x"} and e.format_pickers["A"].value == ss.csr()
    assert e.format_pickers["x"].value == ss.dense(1)
    e.format_pickers["A"].preset.value = "dcsr"
    assert not calls  # auto_relower=False: only the button re-lowers
    e.schedule_editor.value = "reorder(j, i)"
    e.relower_button.click()
    assert calls[-1] == ({"A": ss.dcsr(), "x": ss.dense(1)}, "reorder(j, i)")
    assert e.session.error is None and len(e.session) == 5
    assert "reorder(j, i)" in e.copy_as_code()
    e.format_pickers["A"].value = "coo"
    e.relower_button.click()
    assert e.session.error.startswith("FormatError") and e.error_banner.layout.display != "none"
    assert e.session.stages() == ["parse", "error"] and e.index == 1


def test_format_picker_levels_and_mode_order():
    p = FormatPicker("A", "csr")
    seen = []
    p.on_change(seen.append)
    assert [d.value for d in p.levels] == ["Dense", "SparseList"] and p.preset.value == "csr"
    assert "SparseCOO(2)" in p.levels[0].options and "SparseCOO(2)" not in p.levels[1].options
    assert set(LEVELS) <= set(p.levels[1].options)
    p.levels[0].value = "SparseList"
    assert p.value == ss.dcsr() and p.preset.value == "dcsr" and seen == [ss.dcsr()]
    p.levels[0].value = "SparseCOO(2)"
    assert p.value == ss.coo() and p.levels[1].disabled and p.preset.value == "coo"
    p.levels[0].value = "Dense"  # the covered slot comes back as SparseList
    assert p.value == ss.csr() and not p.levels[1].disabled
    p.mode_order.value = (1, 0)
    assert p.value == ss.csc() and p.preset.value == "csc"
    p.levels[1].value = "SparseBand"
    assert str(p.value) == "Dense(SparseBand(Element(0.0))), mode_order=(1, 0)" and p.preset.value == "custom"
    assert len(seen) == 5
    t = FormatPicker("T", "csf", ndim=3)
    assert len(t.levels) == 3 and len(t.mode_order.options) == 6
    t.levels[1].value = "SparseCOO(2)"
    assert str(t.value) == "SparseList(SparseCOO(2, Element(0.0)))"


def test_for_program_relowers_on_picker_change_with_real_lowering():
    e = Explorer.for_program("y[i] = A[i, j] * x[j]", "lattice", A="csr", x="dense")
    assert e.session.error is None and "emit-c" in e.session.stages()
    assert set(e.format_pickers) == {"A", "x"} and len(e.format_pickers["x"].levels) == 1
    e.slider.value = e.slider.max
    before = e.c_pane.value
    assert "A_val[pA1]" in text(before)
    e.format_pickers["A"].levels[0].value = "SparseList"  # CSR -> DCSR re-lowers at once
    assert e.format_pickers["A"].preset.value == "dcsr"
    assert e.session.error is None and e.c_pane.value != before
    assert e.session.last_artifact("c").text != before
    # a schedule command that does not apply: its StrategyError in the banner
    e.format_pickers["A"].preset.value = "csr"
    e.schedule_editor.value = "reorder(j, i)"
    e.relower_button.click()
    assert e.error_banner.layout.display != "none"
    assert "StrategyError" in e.error_banner.value and "reorder(j, i) does not apply" in e.error_banner.value
    # ... which applies once A is stored column-major
    e.format_pickers["A"].mode_order.value = (1, 0)
    assert e.session.error is None and e.error_banner.layout.display == "none"
    assert any(s.stage == "schedule:reorder" for s in e.session.steps)
    e.schedule_editor.value = "reorder(j i"
    e.relower_button.click()
    assert "cannot read" in e.error_banner.value
    e.schedule_editor.value = "reorder(j, i)"
    e.relower_button.click()
    code = e.copy_as_code()
    assert "mode_order" not in code and "(1, 0)" in code and "reorder" in code
    ns = {}
    exec(code.replace("Explorer(session)", ""), ns)
    assert ns["session"].stages() == e.session.stages()


def test_for_program_looplets_and_tensors():
    A = ss.Tensor.from_numpy(np.eye(4), "csr") if hasattr(ss.Tensor, "from_numpy") else None
    e = Explorer.for_program("y[i] = A[i, j] * x[j]", "looplets", A=A if A is not None else "csr",
                             x=np.ones(4))
    assert e.session.error is None and e.format_pickers["x"].value == ss.dense(1)
    assert e.format_pickers["A"].value == ss.csr()


def test_for_program_of_a_loop_program_keeps_its_outputs_shape_and_its_arrays_dtypes():
    """A histogram's bins are indexed by a computed coordinate: the pickers hold formats, so the
    shape of the array given for bins goes in the options (on main: "cannot size bins"), and the
    int64 scalars its shifts take keep their dtype (on main: dense float64, refused by ``>>``)."""
    from compiler.looplets.histogram import histogram_program
    img, mask = np.array([[1, 17, 40, 63, 2]]), np.array([[1, 1, 1, 1, 0]], bool)
    e = Explorer.for_program(histogram_program("shift"), "looplets", bins=np.zeros(4, np.int64), img=img,
                             mask=mask, shift=np.int64(4), top=np.int64(64))
    assert e.session.error is None and "bins_val" in e.c_pane.value
    assert e.format_pickers["shift"].value == ss.dense(0, dtype="int64")


def test_live_timing_and_compare():
    ex = spmv_example(n=50, density=0.1)
    e = Explorer(ex.trace, run=ex.run(), baselines=ex.baselines(),
                 check=lambda a, b: np.allclose(a, b))
    result = e.time_it()
    assert "scipy" in e.timing_pane.value and "<svg" in e.timing_pane.value
    assert result.checks == {"scipy": True, "numpy (dense)": True}
    assert ex.check()
    c = Compare(ex.trace, build_broken, labels=("hand IR", "broken"), run_a=ex.run(), run_b=ex.run())
    assert "A_pos" in c.c_panes[0].value and "no C" in c.c_panes[1].value
    assert "failed" in c.headers[1].value
    c.kind.value = "fiber-tree"
    assert "<svg" in c.artifact_panes[0].value
    c.time_button.click()
    assert "hand IR" in c.timing_pane.value


def _tagged_trace():
    """A hand-built trace shaped like the strategies' tagged ones: a lattice, a looplet nest,
    and the emit-c step's C with ``data["provenance"]`` by tag."""
    t = ss.Trace()
    t.record("lattice", artifacts=[ss.Artifact(
        "lattice", "j", "p0 p1", dot='digraph { p0 [label="[A | x]\\nA[i, j] * x[j]"]; p1 [label="[A]"] }')])
    t.record("unfurl", artifacts=[ss.Artifact(
        "looplet-nest", "A", "", dot='digraph { n0 [label="Stepper(stop=jA + 1)"]; n1 [label="Spike"] }')])
    c = "void k(void) {\n  a();\n  b();\n  c();\n}"
    origins = {"lattice:j:p0": {"kind": "lattice", "index": "j", "operands": ["A", "x"]},
               "lattice:j:p1": {"kind": "lattice", "index": "j", "operands": ["A"]},
               "looplet:j:Stepper": {"kind": "looplet", "index": "j", "operands": ["A"], "style": "Stepper"}}
    t.record("emit-c", after=c, artifacts=[ss.Artifact("c", "k", c, data={"provenance": {
        "lattice:j:p0": [2], "lattice:j:p1": [3], "looplet:j:Stepper": [4]}, "origins": origins})])
    return t


def _filled(svg_html: str) -> dict[str, str]:
    """{node title: fill colour} of the highlighted nodes."""
    import re
    out = {}
    for m in re.finditer(r'<g id="[^"]*" class="node highlighted"[^>]*>\s*<title>(.*?)</title>.*?fill="(#[0-9a-f]+)"',
                         svg_html, re.S):
        out[m.group(1)] = m.group(2)
    return out


def test_selecting_a_tag_highlights_its_c_lines_and_nodes():
    e = Explorer(_tagged_trace())
    tags = [v for _, v in e.provenance.options]
    assert tags == ["", "lattice:j:p0", "lattice:j:p1", "looplet:j:Stepper"]
    # all tags: the lattice's points take their tags' colours (matched by the last component),
    # distinct ones, as the step gives them (and keeps them when a tag is chosen)
    color_for = e.step_colors(0).__getitem__
    assert _filled(e.artifact_pane.value) == {"p0": color_for("lattice:j:p0"), "p1": color_for("lattice:j:p1")}
    assert color_for("lattice:j:p0") != color_for("lattice:j:p1")
    assert 'data-tags="lattice:j:p0"' in e.artifact_pane.value
    e.select_tag("lattice:j:p1")
    # the chosen tag's node only, filled as a click links it (the link colour)
    from explorer.linking import LINK_COLOR
    assert _filled(e.artifact_pane.value) == {"p1": LINK_COLOR}
    assert f'data-line="3" style="background:{color_for("lattice:j:p1")};' in e.c_pane.value
    assert 'data-line="2" style="background' not in e.c_pane.value
    assert "C lines 3" in e.provenance_legend.value and "p1" in e.provenance_legend.value
    e.select_tag("looplet:j:Stepper")  # a looplet: its node is labelled "Stepper(...)"
    e.next()
    color_for = e.step_colors(1).__getitem__
    assert e.index == 1 and _filled(e.artifact_pane.value) == {"n0": LINK_COLOR}
    assert f'data-line="4" style="background:{color_for("looplet:j:Stepper")};' in e.c_pane.value
    e.select_tag(None)
    # all tags again: the nest's Stepper colours its line; the lattice point p0, which nothing
    # of this step shows, leaves its line plain (a colour there would name nothing in the view)
    assert e.provenance_legend.value == "" and 'data-line="4" style="background' in e.c_pane.value
    assert 'data-line="2" style="background' not in e.c_pane.value


def test_export_html_colours_provenance_on_every_step():
    import html
    import json
    import re

    from explorer import export_html
    from explorer.export import external_urls
    from explorer.sharedc import painted_lines
    page = export_html(_tagged_trace())
    assert '<nav class="provenance">' in page and 'data-tag="looplet:j:Stepper"' in page
    lattice_step, nest_step = page.split('id="step-1"')[0], page.split('id="step-1"')[1].split('id="step-2"')[0]
    # each step's tags in distinct colours, as the step gives them (its data-colors)
    colors = [json.loads(html.unescape(c)) for c in re.findall(r'<section [^>]*data-colors="([^"]*)"', page)]
    assert len(colors) == page.count("<section ") and all(len(set(c.values())) == len(c) for c in colors), colors
    assert _filled(lattice_step) == {"p0": colors[0]["lattice:j:p0"], "p1": colors[0]["lattice:j:p1"]}
    assert 'data-tags="looplet:j:Stepper"' in page and "selectTag" in page
    # (the step's C filled by the page's script from the one C the page holds, line 4 painted in the Stepper's colour)
    assert painted_lines(nest_step)[4] == (colors[1]["looplet:j:Stepper"], "looplet:j:Stepper"), nest_step
    assert external_urls(page) == []


@pytest.mark.parametrize("program, formats", [
    ("y[i] = A[i, j] * x[j]", {"A": "csr", "x": "dense"}),
    ("y[i] = A[i] + B[i]", {"A": "sparse_vector", "B": "sparse_vector"}),
])
def test_real_lattice_tags_name_drawn_points_and_c_lines(program, formats):
    """Every lattice tag the strategy puts on the C names a point drawn in some lattice."""
    e = Explorer.for_program(program, "lattice", **formats)
    tags = [v for _, v in e.provenance.options if v.startswith("lattice:")]
    if not tags:
        pytest.skip("this compiler does not tag lattice points yet")
    for tag in tags:
        e.select_tag(tag)
        assert f'style="background:{e.step_colors(e.index)[tag]};' in e.c_pane.value
        drawn = []
        for i in range(len(e.session)):
            e.goto(i)
            if f'data-tags="{tag}' in e.artifact_pane.value or f' {tag}"' in e.artifact_pane.value:
                drawn.append(e.session.steps[i].stage)
        assert "lattice" in drawn, (tag, drawn)


# --- RebuildControls and per-side re-lowering ----------------------------------------------

from explorer.rebuild import rebuild_for
from widgets import RebuildControls

SPMV = "y[i] = A[i, j] * x[j]"


def _c(session):
    art = session.last_artifact("c")
    return art.text if art is not None else None


def _recreate(recipe):
    """Run a "copy as code" recipe; its session's C."""
    ns = {}
    exec(recipe.replace("Explorer(session)", ""), ns)
    return ns["session"]


def test_rebuild_controls_build_one_picker_per_tensor():
    c = RebuildControls(rebuild_for(SPMV, "lattice"), {"A": "csr", "x": "dense"}, ndims={"x": 1})
    assert list(c.format_pickers) == ["A", "x"]
    assert all(isinstance(p, FormatPicker) for p in c.format_pickers.values())
    assert c.format_pickers["A"].ndim == 2 and c.format_pickers["x"].ndim == 1
    assert c.formats() == {"A": ss.csr(), "x": ss.dense(1)}
    pickers_box = c.children[0]
    assert list(pickers_box.children) == list(c.format_pickers.values())
    assert "ss-rebuild" in c._dom_classes
    assert RebuildControls(None).format_pickers == {}
    with pytest.raises(RuntimeError, match="nothing to re-lower"):
        RebuildControls(None).relower()


def test_changing_a_picker_relowers_with_the_new_format():
    c = RebuildControls(rebuild_for(SPMV, "lattice"), {"A": "csr", "x": "dense"}, ndims={"x": 1})
    seen = []
    c.on_session(seen.append)
    csr_session = c.relower()
    assert seen == [csr_session] and csr_session.error is None
    assert "A0_pos" not in _c(csr_session)  # CSR: a dense outer level
    c.format_pickers["A"].value = "dcsr"
    assert len(seen) == 2 and seen[1] is not csr_session and seen[1].error is None
    assert "A0_pos" in _c(seen[1]) and "A0_idx" in _c(seen[1])  # DCSR: compressed rows
    assert seen[1].steps[0].stage == "parse" and "emit-c" in seen[1].stages()
    # the same format again changes nothing; auto_relower off: only relower() lowers
    c.format_pickers["A"].value = "dcsr"
    c.auto_relower = False
    c.format_pickers["A"].value = "csc"
    assert len(seen) == 2
    c.relower_button.click()
    assert len(seen) == 3 and _c(seen[2]) != _c(seen[1])


@pytest.mark.parametrize("schedule, message", [("reorder i j", "cannot read"),
                                               ("reorder(j, i)", "does not apply"),
                                               ("frobnicate(i)", "")])
def test_a_bad_schedule_gives_a_failed_session_not_an_exception(schedule, message):
    c = RebuildControls(rebuild_for(SPMV, "lattice"), {"A": "csr", "x": "dense"}, ndims={"x": 1},
                        schedule=schedule)
    seen = []
    c.on_session(seen.append)
    session = c.relower()  # must not raise
    assert seen == [session]
    assert session.error and message in session.error
    assert _c(session) is None
    e = Explorer(build_spmv, rebuild=rebuild_for(SPMV, "lattice"), formats={"A": "csr", "x": "dense"},
                 ndims={"x": 1}, schedule=schedule)
    e.relower_button.click()  # must not raise either
    assert e.error_banner.layout.display != "none" and message in e.error_banner.value


def test_explorer_pickers_relower_with_a_new_format():
    e = Explorer.for_program(SPMV, "looplets", A="csr", x="dense")
    first = e.session
    assert set(e.format_pickers) == {"A", "x"} and e.controls.format_pickers is e.format_pickers
    e.format_pickers["A"].preset.value = "dcsr"
    assert e.session is not first and e.session.error is None
    assert e.formats()["A"] == ss.dcsr() and _c(e.session) != _c(first)
    assert "A0_pos" in _c(e.session)


def test_compare_sides_relower_independently():
    c = Compare.for_program(SPMV, "lattice", A="csr", x="dense")
    assert c.controls[0] is not None and c.controls[1] is not None and c.controls[0] is not c.controls[1]
    a_pickers, b_pickers = c.controls[0].format_pickers, c.controls[1].format_pickers
    assert set(a_pickers) == set(b_pickers) == {"A", "x"}
    assert a_pickers["A"] is not b_pickers["A"]
    # each column shows its own controls
    columns = c.columns
    assert c.controls[0] in columns[0].children and c.controls[1] in columns[1].children
    assert c.controls[1] not in columns[0].children
    c_a, c_b = _c(c.sessions[0]), _c(c.sessions[1])
    pane_a, pane_b = c.c_panes[0].value, c.c_panes[1].value
    assert c_a == c_b and "A0_pos" not in c_a
    b_pickers["A"].preset.value = "dcsr"  # side b only
    assert c.formats(1)["A"] == ss.dcsr() and c.formats(0)["A"] == ss.csr()
    assert _c(c.sessions[0]) == c_a and c.c_panes[0].value == pane_a
    assert _c(c.sessions[1]) != c_b and "A0_pos" in _c(c.sessions[1])
    assert c.c_panes[1].value != pane_b and "A0_pos" in text(c.c_panes[1].value)
    a_pickers["A"].mode_order.value = (1, 0)  # side a only: CSC
    assert _c(c.sessions[0]) != c_a and "A0_pos" in _c(c.sessions[1])
    assert c.formats(1)["A"] == ss.dcsr()


def test_compare_for_program_opens_on_each_strategys_drawing():
    """Both columns draw: the lattices of one side next to the looplet nests of the other.
    (The menu was filled after the first side lowered, with that side's first kind, the
    iteration graph, which the looplet side does not draw: it showed "(no iteration-graph)".)"""
    c = Compare.for_program(SPMV, A="csr", x="dense")
    assert c.kind.value == "lattice | looplet-nest"
    assert 'data-kind="lattice"' in c.artifact_panes[0].value
    assert 'data-kind="looplet-nest"' in c.artifact_panes[1].value
    # a kind asked for is kept
    c = Compare.for_program(SPMV, A="csr", x="dense", kind="iteration-graph")
    assert c.kind.value == "iteration-graph" and "<svg" in c.artifact_panes[0].value


def test_compare_with_a_rebuild_pair_and_one_side_without():
    c = Compare(spmv_trace(), ss.Trace(), labels=("fixed", "picked"),
                rebuild=(None, rebuild_for(SPMV, "looplets")),
                formats={"A": "csr", "x": "dense"}, ndims={"x": 1})
    assert c.controls[0] is None and c.controls[1] is not None
    before = c.c_panes[0].value
    sessions = c.relower()
    assert sessions[1].error is None and "A_pos" in c.c_panes[0].value and c.c_panes[0].value == before
    with pytest.raises(RuntimeError, match="no rebuild"):
        c.relower(0)
    with pytest.raises(ValueError):
        c.set_session(2, sessions[1])


def test_copy_as_code_recreates_an_equivalent_kernel():
    e = Explorer.for_program(SPMV, "lattice", A="csc", x="dense", schedule="reorder(j, i)")
    assert e.session.error is None
    ns_session = _recreate(e.copy_as_code())
    assert ns_session.error is None and _c(ns_session) == _c(e.session)
    # after a picker change, the recipe follows the new formats
    e.format_pickers["x"].preset.value = "sparse_vector"
    assert e.session.error is None
    assert _c(_recreate(e.copy_as_code())) == _c(e.session)
    # a side of a Compare: its session's recipe
    c = Compare.for_program(SPMV, ("lattice", "looplets"), A=("csr", "dcsr"), x="dense")
    for side in (0, 1):
        assert _c(_recreate(c.sessions[side].recipe)) == _c(c.sessions[side])
    assert _c(c.sessions[0]) != _c(c.sessions[1])


def test_copy_as_code_keeps_checked_options_and_fixed_tensors():
    """rebuild_for's checked flag, options and fixed tensors are part of the kernel: a recipe
    without them lowered another kernel (no bounds checks, another name, a missing tensor)."""
    e = Explorer.for_program(SPMV, "lattice", checked=True, options={"name": "spmv_checked"},
                             A="csr", x="dense")
    assert e.session.error is None and "(checked)" in _c(e.session) and "spmv_checked" in _c(e.session)
    assert _c(_recreate(e.copy_as_code())) == _c(e.session)
    x = np.arange(5.0)
    c = RebuildControls(rebuild_for(SPMV, "looplets", x=x), {"A": "csr"})
    session = c.relower()
    assert session.error is None
    assert _c(_recreate(session.recipe)) == _c(session)


def test_clicking_a_coloured_part_selects_its_tags_in_turn():
    e = Explorer.for_program(SPMV, "lattice", A="csr", x="dense")
    e.goto(0)
    import re
    groups = re.findall(r'class="pv" data-tags="([^"]*)"', e.program_pane.value)
    tags = next(g.split() for g in groups if len(g.split()) >= 2)
    assert all(t in e.session.provenance() for t in tags)
    e.pick.value = " ".join(tags) + "|1"  # what the pane's onclick writes
    assert e.provenance.value == tags[0] and tags[0] in e.provenance_legend.value
    e.pick.value = " ".join(tags) + "|2"
    assert e.provenance.value == tags[1]
    for k in range(2, len(tags) + 1):
        e.pick.value = " ".join(tags) + f"|{k + 1}"
    assert e.provenance.value == ""  # after the last tag: all again
    assert e.pick_tags(["not-a-tag"]) == () and e.provenance.value == ""


def test_header_and_slider_agree_under_a_filter():
    """The slider counts the steps shown; the header said 'step 4 of 10' at the slider's 1 of 1."""
    e = Explorer(ss.lower(SPMV, "lattice", A="csr", x="dense").trace)
    lattices = [i for i, s in enumerate(e.session.steps) if s.stage == "lattice"]
    e.filter.value = "stage:lattice"
    e.slider.value = 1
    assert e.index == lattices[1] and e.slider.max == 1
    head = text(e.header.value)
    assert head.startswith("step 1 of 1 ") and f"step {lattices[1]} of the whole trace's" in head
    e.filter.value = ""
    assert text(e.header.value).startswith(f"step {e.index} of {len(e.session) - 1}: ")


def test_relowering_keeps_the_stage_the_step_and_the_provenance_choice():
    """After a format change the view stays where it was (it jumped back to step 0, all tags)."""
    e = Explorer.for_program(SPMV, "lattice", A="csr", x="dense")
    lattices = [i for i, s in enumerate(e.session.steps) if s.stage == "lattice"]
    e.goto(lattices[1])
    tag = next(t for t in e.session.provenance() if t.startswith("lattice:j"))
    e.select_tag(tag)
    first = e.session
    e.format_pickers["A"].preset.value = "dcsr"
    assert e.session is not first and e.session.error is None and "A0_pos" in _c(e.session)
    new_lattices = [i for i, s in enumerate(e.session.steps) if s.stage == "lattice"]
    assert e.index == new_lattices[1] and e.slider.value == e.index
    assert e.provenance.value == tag and tag in e.provenance_legend.value
    assert text(e.header.value).startswith(f"step {e.index} of ") and "lattice" in e.header.value
    # a filter is kept too, and the step stays one it shows
    e.filter.value = "stage:emit-c"
    e.format_pickers["A"].preset.value = "csr"
    assert e.filter.value == "stage:emit-c" and e.session.steps[e.index].stage == "emit-c"
    assert e.slider.max == 0 and text(e.header.value).startswith("step 0 of 0 ")


def test_compare_one_stage_slider_moves_both_columns():
    """One slider over both traces, aligned by stage family (Compare showed each side's final C
    and every drawing, with no way to see the two lowerings at the same stage)."""
    c = Compare.for_program(SPMV, A="csr", x="dense")
    a, b = c.sessions
    assert c.stage_slider.value == c.stage_slider.max   # opens at the end: both kernels' C
    assert {st.a for st in c.stations} == set(range(len(a)))
    assert {st.b for st in c.stations} == set(range(len(b)))
    c.goto_stage("parse")
    assert (c.step_of(0), c.step_of(1)) == (0, 0)
    assert all("step 0 of" in text(c.steps_shown[k].value) for k in range(2))
    assert all("no C yet" in text(c.c_panes[k].value) and "sum[j]" in text(c.c_panes[k].value) for k in range(2))
    st = c.goto_stage("index j")
    assert a.steps[st.a].stage == "lattice" and b.steps[st.b].stage == "unfurl"
    assert "forall j" in text(c.artifact_panes[0].value) and "lattice" in c.stage_label.value
    assert "unfurl" in c.stage_label.value
    assert 'data-kind="looplet-nest"' in c.artifact_panes[1].value
    # the drawings so far: nothing the looplet side draws after the unfurl of j
    later = [art for i, art in b.artifacts("looplet-nest") if i > st.b]
    assert all(art.name not in text(c.artifact_panes[1].value) for art in later if art.name)
    c.goto_stage("emit-c")
    assert all(text(c.code_titles[k].value) == "C emitted at this step (emit-c)" for k in range(2))
    assert all("A1_pos" in text(c.c_panes[k].value) and "int " in text(c.c_panes[k].value) for k in range(2))
    with pytest.raises(ValueError, match="shared stages"):
        c.goto_stage("index q")
    # a side re-lowered: the slider stays at the stage both had reached
    c.goto_stage("index j")
    c.controls[1].format_pickers["A"].preset.value = "dcsr"
    assert c.station.key == "index j" and c.sessions[1] is not b
    assert c.sessions[1].steps[c.step_of(1)].stage == "unfurl"


def test_compare_times_both_strategies_given_data():
    import scipy.sparse as sp

    A = sp.random(30, 20, density=0.2, format="csr", random_state=1)
    x = np.linspace(0, 1, 20)
    c = Compare.for_program(SPMV, A=A, x=x)
    assert c.timing_row.layout.display == ""
    result = c.time_both()
    assert [r.name for r in result.rows] == ["lattice", "looplets", "numpy (reference)"]
    assert result.checks == {"looplets": True, "numpy (reference)": True}
    assert "looplets" in c.timing_pane.value and "<svg" in c.timing_pane.value
    # formats only: nothing to time, no timing row
    c = Compare.for_program(SPMV, A="csr", x="dense")
    assert c.timing_row.layout.display == "none"
    with pytest.raises(RuntimeError, match="run_a and run_b"):
        c.time_both()


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
def test_copy_as_code_of_a_kernel_is_its_lower_call(strategy):
    """Explorer(kernel)'s recipe is a few lines that lower it again (Explorer(trace) gave the
    trace's JSON inline: 58 KB for the tour's SpMV)."""
    kernel = ss.lower(SPMV, strategy, A="dcsr", x="dense")
    code = Explorer(kernel).copy_as_code()
    assert len(code.splitlines()) < 15 and "from_json" not in code and "compiler.lower(" in code
    assert _c(_recreate(code)) == kernel.c_source
    # a bare trace: a short recipe that reopens it once saved, never the JSON inline
    code = Explorer(kernel.trace).copy_as_code()
    assert len(code) < 600 and "from_json" not in code and "explore('trace.json')" in code


def test_export_shows_the_pages_path(tmp_path):
    e = Explorer(ss.lower(SPMV, "lattice", A="csr", x="dense"))
    target = tmp_path / "spmv.html"
    assert e.export(str(target)) == str(target)
    assert target.read_text().startswith("<!DOCTYPE html>")
    assert str(target) in text(e.export_note.value) and "steps" in e.export_note.value
    with pytest.raises(OSError):
        e.export(str(tmp_path / "no-such-dir" / "x.html"))
    assert "could not write" in e.export_note.value


def test_the_explorer_shows_the_shape_operator_stages_of_an_array_expression():
    import scipy.sparse as sp

    from compiler import array as xp

    A = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    B = sp.random(4, 5, density=0.4, format="csr", random_state=1)
    expr = xp.concat([ss.asarray(A), ss.asarray(B)], axis=0) @ ss.asarray(np.arange(5.0))
    # (looplets, whose shape-operators step this shows; given no strategy, the lattice lowers it)
    e = Explorer(ss.lower(expr, strategy="looplets"))
    stages = e.session.stages()
    import html
    import re

    def concat_marks():
        marked = re.findall(r'data-tags="([^"]*)"', e.program_pane.value)
        return [t.split() for t in marked if "shape:0:concat" in t.split()]

    e.goto(stages.index("array"))
    assert "<svg" in e.artifact_pane.value and "concat axis 0" in text(e.artifact_pane.value)
    assert "input of array" in e.diff_title.value and "concat((A, B), axis=0)" in text(e.diff_pane.value)
    # the concat's name and binding in the program coloured as its box in the drawing: its node's tag first
    assert len(concat_marks()) == 2 and all(t[0].startswith("expr:") for t in concat_marks()), concat_marks()
    e.goto(stages.index("shapes"))
    # the operator's name and binding marked in the program, its premise in their tooltip; coloured as its
    # row of the step's table of operators: the shape operator's tag first
    assert len(concat_marks()) == 2 and all(t[0] == "shape:0:concat" for t in concat_marks()), concat_marks()
    assert 'title="concat: consumes k, l, makes i; |i| = |k| + |l| = 6 + 4 = 10' in html.unescape(e.program_pane.value)
    assert "|l| = 4" in text(e.artifact_pane.value)            # the table of extents
    e.goto(stages.index("shape-operators"))
    assert "shape:0:concat" in e.diff_pane.value   # the notation it turned into loops
    assert "for l = 0:B0_size" in text(e.program_pane.value)
