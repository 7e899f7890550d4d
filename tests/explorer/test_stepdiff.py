"""The diff and C panes say what they show: no diff across two representations (issue 27)."""

import pytest

import compiler as ss
from explorer import explore
from explorer.stepdiff import c_view, diff_view, representations

SPMV = "y[i] = A[i, j] * x[j]"


@pytest.fixture(scope="module", params=["lattice", "looplets"])
def session(request):
    return explore(ss.lower(SPMV, request.param, A="csr", x="dense").trace)


def _first(s, stage):
    return next(i for i, st in enumerate(s.steps) if st.stage == stage)


def test_a_translating_step_shows_its_input_not_a_diff_across_representations(session):
    s = session
    emit = _first(s, "emit-c")
    v = diff_view(s, emit)
    # before: '-kernel y(...)' against '+#include ...', IR against C, under "diff from the previous step"
    assert v.kind == "input" and v.title == "input of emit-c, which made C"
    assert v.text == s.steps[emit].before_text and "#include" not in v.text
    for i, step in enumerate(s.steps):
        view = diff_view(s, i)
        if view.kind == "diff" and view.against is None:
            assert representations(step.stage) is None, step.stage   # one representation in and out
        if view.against is not None:   # an earlier output of the same representation
            assert representations(s.steps[view.against].stage)[1] == representations(step.stage)[1]


def test_lattice_steps_show_the_notation_they_were_built_from():
    s = explore(ss.lower(SPMV, "lattice", A="csr", x="dense").trace)
    lattices = [i for i, st in enumerate(s.steps) if st.stage == "lattice"]
    assert len(lattices) == 2
    for i in lattices:
        v = diff_view(s, i)
        assert v.kind == "input" and "forall" in v.text and "lattice at" not in v.text
    same = diff_view(s, _first(s, "concretize"))
    assert same.kind == "diff" and same.title == "diff: what concretize changed" and "+forall i:" in same.text


def test_the_c_pane_says_which_step_emitted_its_c(session):
    s = session
    emit = _first(s, "emit-c")
    assert c_view(s, 0).title == f"C of the final kernel, emitted later, at step {emit} (emit-c)"
    assert c_view(s, emit).title == "C emitted at this step (emit-c)"
    assert c_view(s, emit + 1).title == f"C as it stands at this step: emitted at step {emit} (emit-c)"
    assert c_view(s, 0).text == c_view(s, emit).text == s.last_artifact("c").text


def test_no_c_at_all():
    t = ss.Trace()
    t.record("parse", after="y[i] = A[i]")
    v = c_view(explore(t), 0)
    assert v.emitted_at is None and v.text == ""


def test_a_reduction_of_every_entry_shows_its_loops_becoming_one_walk():
    s = explore(ss.lower("s[] = max[i, j](A[i, j])", "looplets", A="csr").trace)
    v = diff_view(s, _first(s, "ravel"))
    # the two loops over the rows and the columns, then the one loop over the raveled entries
    assert v.kind == "diff" and v.title == "diff: what ravel changed", v.title
    assert "-for i = _" in v.text and "-  for j = _" in v.text, v.text
    assert "+for i_j = 0:A0_size * A1_size" in v.text and "+  s[] <<max>>= ravel(A)[i_j]" in v.text, v.text
