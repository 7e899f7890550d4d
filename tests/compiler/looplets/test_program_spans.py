"""Where the loop-program printer puts each loop, access and looplet (``show_spans``), and what a
looplet lowering's steps record of it (``data["before_spans"]``/``["after_spans"]``): the spans are
the printer's own strings for those nodes, so the explorer marks them without patterns (issue 29,
item 5)."""

from hypothesis import example, given, settings, strategies as st

from compiler.algebra import lookup
from compiler.looplets.looplet_provenance import printed, printed_step
from compiler.looplets.program import (Access, Assign, Block, Call, Declare, Define, Extent, Freeze, Index, Literal,
                                       Loop, Sieve, TensorRef, Value, Variable, children, show_expr, show_spans, show_stmt,
                                       walk)
from compiler.trace import Trace

# names a pattern reads as something else: keywords, looplet heads, a loop's word in a name
NAMES = st.sampled_from(["A", "y", "Run", "Fill", "end", "loops", "forall_x", "for_i", "sum", "x_val"])
INDICES = st.sampled_from(["i", "j", "forall_x", "k2"]).map(Index)
OPS = st.sampled_from(["+", "-", "*", "<", "max", "and"]).map(lookup)

leaves = st.one_of(
    INDICES,
    st.integers(-3, 3).map(Literal),
    st.sampled_from(["v", "t_2"]).map(Variable),
    # a host value, with braces in it too (``${...}`` is no C block)
    st.sampled_from(["A_val[qA]", "x{1}", "f({a, b})"]).map(lambda e: Value(e, "float64")))


def _access(children):
    return st.builds(lambda name, idxs: Access(TensorRef(name), tuple(idxs)), NAMES,
                     st.lists(st.one_of(INDICES, children), min_size=0, max_size=3))


exprs = st.recursive(
    st.one_of(leaves, _access(leaves)),
    lambda children: st.one_of(
        _access(children),
        st.builds(lambda op, a, b: Call(op, (a, b)), OPS, children, children),
        st.builds(lambda a: Call(lookup("neg"), (a,)), children),
        st.builds(lambda a: Call(lookup("not"), (a,)), children),
        st.builds(lambda a, b: Call("coalesce", (a, b)), children, children)),
    max_leaves=8)

lhs = st.builds(lambda name, idxs: Access(TensorRef(name), tuple(idxs), "update"), NAMES,
                st.lists(INDICES, max_size=2))
statements = st.recursive(
    st.one_of(st.builds(Assign, lhs, st.one_of(st.none(), OPS), exprs),
              st.builds(lambda n, e: Declare(TensorRef(n), e), NAMES, exprs),
              st.builds(lambda n: Freeze(TensorRef(n)), NAMES)),
    lambda body: st.one_of(
        st.builds(lambda i, ext, b: Loop(i, ext, b), INDICES,
                  st.one_of(st.none(), st.just(Extent(0, 5))), body),
        st.builds(Sieve, exprs, body),
        st.builds(lambda v, e, b: Define(Variable(v), e, b), st.sampled_from(["v", "w"]), exprs, body),
        st.lists(body, min_size=0, max_size=3).map(lambda s: Block(tuple(s)))),
    max_leaves=6)


def _outer_accesses(node):
    """The accesses a reader sees as parts: every access not inside another's indices."""
    if isinstance(node, Access):
        return [node]
    return [a for c in children(node) for a in _outer_accesses(c)]


def _check(stmt):
    text, spans = show_spans(stmt)
    assert text == str(stmt), "the spans' text is the text str() prints"
    lines = text.splitlines()
    seen = []
    for n, parts in spans.items():
        line = lines[n - 1]
        ends = [0]
        for start, end, node in parts:
            assert ends[-1] <= start < end <= len(line), (line, parts)   # in order, not overlapping
            ends.append(end)
            if isinstance(node, Loop):
                assert line[start:end] == show_stmt(node, 0)[0] and start == len(line) - len(line.lstrip())
            else:
                assert line[start:end] == show_expr(node), (line, start, end, show_expr(node))
            seen.append(node)
    loops = [n for n in walk(stmt) if isinstance(n, Loop)]
    assert [id(n) for n in seen if isinstance(n, Loop)] == [id(n) for n in loops]
    assert sorted(map(id, (n for n in seen if isinstance(n, Access)))) == sorted(map(id, _outer_accesses(stmt)))


@settings(max_examples=30, deadline=None)
@given(statements)
@example(Loop(Index("forall_x"), None, Assign(Access(TensorRef("Run"), (Index("forall_x"),), "update"), lookup("+"),
                                              Call(lookup("*"), (Value("f({a, b})", "float64"),
                                                                 Access(TensorRef("end"), (Index("forall_x"),)))))))
def test_the_spans_are_exactly_what_the_printer_prints_for_each_node(stmt):
    _check(stmt)


@settings(max_examples=25, deadline=None)
@given(exprs)
def test_an_expressions_spans_are_its_accesses(e):
    text, spans = show_spans(e)
    assert text == show_expr(e) and set(spans) <= {1}
    assert [text[a:b] for a, b, _ in spans.get(1, [])] == [show_expr(a) for a in _outer_accesses(e)]


def test_a_step_records_what_each_part_is():
    """``printed`` describes each part in the explorer's terms (a loop's index, an access's tensor,
    indices and mode); ``printed_step`` defers both the texts and the spans to their first read."""
    i = Index("i")
    body = Loop(i, None, Assign(Access(TensorRef("y"), (i,), "update"), lookup("+"),
                                Access(TensorRef("Run"), (i, Index("j")))))
    text, spans = printed([body, Freeze(TensorRef("y"))])
    assert text == "for i = _\n  y[i] += Run[i, j]\n@freeze(y)"
    assert spans == {"1": [[0, 9, {"index": "i"}, "loop"]],
                     "2": [[2, 6, {"tensor": "y", "indices": ["i"], "mode": "update"}, "access"],
                           [10, 19, {"tensor": "Run", "indices": ["i", "j"], "mode": "read"}, "access"]]}
    step = Trace().record("wrapperize", **printed_step(body.body, body, {"index": "i"}))
    assert step.before_text == "y[i] += Run[i, j]" and step.after_text == text.rsplit("\n", 1)[0]
    assert step.data["index"] == "i" and step.data["after_spans"]["1"] == spans["1"]
    assert step.data["before_spans"]["1"][1][:2] == [8, 17]
    # imperative code (anything but program nodes) is printed at once and records no parts
    plain = printed_step(["int x = 0;"], None, None)
    assert plain == {"before": "int x = 0;", "after": None, "data": None}


def test_a_lowering_prints_its_steps_programs_when_they_are_read(monkeypatch):
    """A looplet lowering keeps its steps' programs, printed (texts and spans) only when the trace
    is read: most traces never are, and printing every step was most of a lowering's printing
    (issue 29 §5). Read, each text is the printer's, and its spans are where they say."""
    import numpy as np
    import scipy.sparse as sp

    import compiler as ss
    import compiler.looplets.looplet_provenance as provenance
    calls = []
    real = provenance.show_spans
    monkeypatch.setattr(provenance, "show_spans", lambda node: calls.append(node) or real(node))
    # (names no other test lowers: a kernel the process has not lowered, and whose trace it has
    # not read, before)
    M = ss.Tensor.from_scipy(sp.random(5, 4, density=0.5, format="csr", random_state=1), name="M_lazy")
    kernel = ss.lower("y_lazy[i] = M_lazy[i, j] * v_lazy[j]", strategy="looplets", M_lazy=M, v_lazy=np.arange(4.0))
    steps = [s for s in kernel.trace.steps if s.stage.startswith(("unfurl", "lower:"))]
    assert steps and not calls, "the lowering printed its steps' programs with their spans"
    for s in steps:
        data = s.data if isinstance(s.data, dict) else {}
        for side in ("before", "after"):
            text = getattr(s, side + "_text")
            assert (getattr(s, side) or "") == text
            for n, parts in data.get(side + "_spans", {}).items():
                assert all(0 <= a < b <= len(text.splitlines()[int(n) - 1]) for a, b, _, _ in parts)
    assert calls
