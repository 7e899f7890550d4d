"""What a looplet lowering says about its tagged code: its tooltip is made when read (issue 29 §5)."""

import numpy as np
import scipy.sparse as sp

import compiler as ss
import compiler.looplets.looplet_provenance as provenance
from compiler.imperative.ir import Break, Tagged
from compiler.imperative.traverse import walk
from compiler.trace import Later, LaterText, Trace


def test_a_looplet_lowerings_tooltip_is_made_when_the_trace_is_read(monkeypatch):
    """``looplet_what`` printed the program each looplet lowering lowered, for a tooltip most
    lowerings never show (a tenth of a looplet lowering's time). It is made when the C artifact's
    ``data`` is first read; the IR keeps it as an immutable :class:`LaterText`, which equality
    ignores."""
    made = []
    real = provenance._what_text
    monkeypatch.setattr(provenance, "_what_text", lambda *a: made.append(a) or real(*a))
    # (names no other test lowers: the trace of a kernel this process has not read before)
    M = ss.Tensor.from_scipy(sp.random(5, 4, density=0.5, format="csr", random_state=2), name="M_what")
    args = {"M_what": M, "v_what": np.arange(4.0)}
    kernel = ss.lower("y_what[i] = M_what[i, j] * v_what[j]", strategy="looplets", **args)
    tagged = [n for n in walk(kernel.function.body) if isinstance(n, Tagged) and n.tag.startswith("looplet:")]
    assert tagged and all(isinstance(n.what, LaterText) for n in tagged)
    assert not made, "the lowering printed its looplets' programs for their tooltips"

    data = kernel.trace.find("emit-c")[-1].artifact("c").data
    assert made
    for tag, what in data["tags"].items():   # (each says its rule and index, as its origin records)
        origin = data["origins"][tag]
        if origin["kind"] == "expression":   # (a node of the expression tree: its label)
            assert what.startswith("the expression tree's node "), (tag, what)
            continue
        assert what.startswith(f"{origin['style']} on {origin['index']}: ") and " in " in what, (tag, what)
    assert {str(n.what) for n in tagged} <= {w for ws in data["tags"].values() for w in ws.split("; ")}
    # a saved trace holds the texts
    saved = Trace.from_json(kernel.trace.to_json()).find("emit-c")[-1].artifact("c").data
    assert saved["tags"] == data["tags"]
    # equality and hashing ignore a tooltip, and do not make it: the same code described otherwise is
    # the same code (the kernel cache looks functions up by them)
    lazy = Tagged("t", [Break()], LaterText(Later(lambda: made.append("made") or "x")))
    assert lazy == Tagged("t", [Break()], "y") and hash(lazy) == hash(Tagged("t", [Break()], "y"))
    assert "made" not in made and str(lazy.what) == "x"
    np.testing.assert_allclose(kernel(**args).to_numpy(), M.to_numpy() @ np.arange(4.0))
