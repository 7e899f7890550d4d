"""The C artifact says what each provenance tag stands for (``data["tags"]``), recorded by the
strategies on their ``Tagged`` IR, so the explorer's tooltips show the lattice point's or the
looplet's code instead of a tag id (issue 27, item 3)."""

from __future__ import annotations

import compiler as ss
from compiler.imperative import Buffer, Function
from compiler.imperative.ir import Break, Tagged
from compiler.imperative.traverse import tag_descriptions
from compiler.trace import Trace


def c_data(kernel) -> dict:
    return kernel.trace.find("emit-c")[-1].artifact("c").data


def test_lattice_tags_name_their_loop_and_case():
    k = ss.lower("y[i] = A[i] * B[i] + C[i]", "lattice", A="sv", B="sv", C="sv")
    data = c_data(k)
    assert set(data["tags"]) == set(data["provenance"])   # every tag says what it is
    assert "case A0 B0: y[i] = A[i] * B[i]" in data["tags"]["lattice:i:A∩B"]
    assert "while i <- A0 ∩ B0 ∩ C0" in data["tags"]["lattice:i:A∩B∩C"]
    assert not any(what.startswith("lattice:") for what in data["tags"].values())


def test_looplet_tags_name_the_looplets_and_their_tensors():
    k = ss.lower("y[i] = A[i, j] * x[j]", "looplets", A="csr", x="dense")
    tags = c_data(k)["tags"]
    stepper = next(t for t in tags if t.startswith("looplet:Stepper:"))
    assert tags[stepper].startswith("Stepper on j: Stepper of A")
    assert "x" in tags[stepper].split(" in ", 1)[0]  # the dense x is read by a Lookup next to it


def test_descriptions_survive_the_trace_json():
    k = ss.lower("y[i] = A[i] * B[i]", "lattice", A="sv", B="sv")
    again = Trace.from_json(k.trace.to_json())
    assert again.find("emit-c")[-1].artifact("c").data["tags"] == c_data(k)["tags"]


def test_a_tag_used_twice_joins_its_descriptions():
    y = Buffer("y", "float64")
    body = [Tagged("t", [Break()], "loop"), Tagged("t", [Break()], "case"), Tagged("u", [Break()])]
    assert tag_descriptions(Function("k", (y,), body).body) == {"t": "loop; case"}
