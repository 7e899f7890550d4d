"""The explorer shows the looplet lowering's ``int-facts`` step from its data (a table of each
fact and why it holds), and the two-strategy slider pairs the ``index-dtype`` steps both record."""

from __future__ import annotations

import html as _html
import re

import numpy as np
import scipy.sparse as sp

import compiler as ss
from compiler import Trace
from compiler.trace import Artifact
from explorer import explore, render_artifact, render_step
from explorer.align import align, stage_key

S = sp.random(6, 8, density=0.3, format="csr", random_state=7)


def text(html: str) -> str:
    return _html.unescape(re.sub(r"<[^>]+>", "", html))


def test_the_int_facts_step_renders_its_facts_as_a_table():
    A = ss.Tensor.from_scipy(S, "csr")
    session = explore(ss.lower("C[i, j] = A[i, j] + B[i, j]", strategy="looplets", A=A, B=A, C="csr"))
    i = next(k for k, s in enumerate(session.steps) if s.stage == "int-facts")
    html = render_step(session.step(i))
    assert 'data-kind="int-facts"' in html and "<table class='ss-int-facts'" in html
    shown = text(html)
    for r in session.steps[i].data["facts"]:
        assert r["fact"] in shown and r["reason"] in shown
    assert "0 <= A1_idx[_] < A1_size" in shown and "validated when A is built" in shown


def test_an_int_facts_artifact_without_data_shows_its_text():
    html = render_artifact(Artifact("int-facts", "integer facts", "0 <= lastA <= A1_size: one past A's last"))
    assert "0 <= lastA <= A1_size" in text(html) and "ss-int-facts" not in html


def test_the_slider_pairs_index_dtype_and_leaves_int_facts_to_the_looplet_side():
    A = ss.Tensor.from_numpy(np.eye(4), "csr")
    program = "C[k, j] = slice(A[i, j], i -> k, (0, 4, 2))"
    lattice = explore(ss.lower(program, strategy="lattice", A=A, C="csr"))
    looplets = explore(ss.lower(program, strategy="looplets", A=A, C="csr"))
    stations = align(lattice, looplets)
    paired = [st for st in stations if st.key == "index-dtype"]
    assert len(paired) == 1
    assert lattice.steps[paired[0].a].stage == looplets.steps[paired[0].b].stage == "index-dtype"
    facts = [st for st in stations if looplets.steps[st.b].stage == "int-facts"]
    assert facts and all(st.key is None for st in facts)
    assert stage_key(Trace().record("index-dtype")) == "index-dtype"
