import time

import numpy as np
import pytest

import compiler as ss
from explorer import explore
from explorer.examples import build_broken, build_spmv, spmv_example, spmv_trace
from widgets import Compare, Explorer


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
    assert "+kernel spmv" in text(e.diff_pane.value) and "-y[i] = sum" in text(e.diff_pane.value)
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
        if formats["A"] == "coo":
            err = ss.FormatError("SparseCOO cannot serve this strategy")
            partial = ss.Trace()
            ss.parse("y[i] = A[i, j] * x[j]", trace=partial)
            err.trace = partial
            raise err
        return spmv_trace()

    e = Explorer(build_spmv, rebuild=rebuild, formats={"A": "csr", "x": "dense"}, schedule="")
    assert set(e.format_pickers) == {"A", "x"} and e.format_pickers["A"].value == "csr"
    e.format_pickers["A"].value = "dcsr"
    e.schedule_editor.value = "reorder(j, i)"
    e.relower_button.click()
    assert calls[-1] == ({"A": "dcsr", "x": "dense"}, "reorder(j, i)")
    assert e.session.error is None and len(e.session) == 5
    assert "reorder(j, i)" in e.copy_as_code()
    e.format_pickers["A"].value = "coo"
    e.relower_button.click()
    assert e.session.error.startswith("FormatError") and e.error_banner.layout.display != "none"
    assert e.session.stages() == ["parse", "error"] and e.index == 1


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
