"""trace_provenance and program_marks on real traces of both strategies."""

import json
import re

import numpy as np
import pytest
import scipy.sparse as sp

import compiler as ss
from explorer import explore
from compiler import Artifact, Trace
from compiler.trace import Step
from explorer.provenance import Mark, Provenance, TagInfo, program_marks, trace_provenance

STRATEGIES = ["lattice", "looplets"]
PROGRAMS = {
    "spmv": ("y[i] = A[i, j] * x[j]", {"i", "j"}, {"y", "A", "x"}),
    "add": ("z[i] = a[i] + b[i]", {"i"}, {"z", "a", "b"}),
}


def _tensors(which):
    if which == "spmv":
        S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
        return {"A": ss.Tensor.from_scipy(S, name="A"), "x": np.arange(5.0)}
    return {"a": ss.Tensor.from_numpy(np.array([0, 1.0, 0, 2, 0, 0, 3]), "sparse_vector"),
            "b": ss.Tensor.from_numpy(np.array([1, 0.0, 0, 2, 0, 4, 0]), "sparse_vector")}


@pytest.fixture(scope="module")
def lowered():
    out = {}
    for strategy in STRATEGIES:
        for which, (program, _, _) in PROGRAMS.items():
            kernel = ss.lower(program, strategy=strategy, **_tensors(which))
            out[strategy, which] = kernel
    return out


CASES = [(s, w) for s in STRATEGIES for w in PROGRAMS]


def _c_artifact(trace):
    return [a for s in trace.steps for a in s.artifacts if a.kind == "c"][-1]


@pytest.mark.parametrize("strategy, which", CASES)
def test_every_tag_maps_to_existing_c_lines(lowered, strategy, which):
    kernel = lowered[strategy, which]
    c = _c_artifact(kernel.trace)
    raw = c.data["provenance"]
    prov = trace_provenance(kernel.trace)
    assert isinstance(prov, Provenance) and prov, "a real lowering tags its C"
    assert set(prov) == {str(t) for t in raw}
    assert prov.c_text == c.text == kernel.c_source
    n_lines = len(c.text.splitlines())
    for tag, lines in prov.items():
        assert lines, tag
        assert lines == sorted(set(lines)) and lines == sorted({int(n) for n in raw[tag]})
        assert all(1 <= n <= n_lines for n in lines), (tag, lines, n_lines)
        assert any(c.text.splitlines()[n - 1].strip() for n in lines), tag  # not only blank lines
        assert prov.info[tag].tag == tag
        # lattice:..., looplet:..., or a node of the expression tree (expr:n3), listed after them
        assert prov.info[tag].kind == strategy.rstrip("s") or (
            prov.info[tag].kind == "expression" and prov.info[tag].nodes == (tag.split(":")[1],))
    kinds = [prov.info[t].kind == "expression" for t in prov]
    assert any(kinds) and kinds == sorted(kinds)
    # the session computes the same, once
    session = explore(kernel.trace)
    assert session.provenance() == prov and session.provenance() is session.provenance()


def _strategy_tags(prov) -> dict:
    """The lattice points' or looplets' tags of ``prov`` (not the expression tree's nodes')."""
    return {t: i for t, i in prov.info.items() if i.kind != "expression"}


@pytest.mark.parametrize("which", PROGRAMS)
def test_lattice_tags_name_their_index_and_operands(lowered, which):
    kernel = lowered["lattice", which]
    _, indices, tensors = PROGRAMS[which]
    prov = trace_provenance(kernel.trace)
    c_lines = prov.c_text.splitlines()
    for tag, info in _strategy_tags(prov).items():
        _, index, names = tag.split(":")
        assert info.kind == "lattice" and info.index == index and index in indices
        assert info.operands == tuple(n for n in names.split("∩") if n != "U")
        assert set(info.operands) <= tensors
        assert prov.by_index(index).count(tag) == 1
    if which == "spmv":
        assert {"lattice:j:A∩x", "lattice:j:A"} <= set(prov)
        assert prov.info["lattice:j:A∩x"].operands == ("A", "x")
        # the point where A and x are both present computes their product
        assert any("A_val" in c_lines[n - 1] and "x_val" in c_lines[n - 1] for n in prov["lattice:j:A∩x"])
        assert all(t.split(":")[1] in "ij" for t in _strategy_tags(prov))
    else:
        assert {"lattice:i:a∩b", "lattice:i:a", "lattice:i:b"} <= set(prov)
        both = [c_lines[n - 1] for n in prov["lattice:i:a∩b"]]
        assert any("a_val" in s and "b_val" in s for s in both)
        only_a = [c_lines[n - 1] for n in prov["lattice:i:a"]]
        assert any("a_val" in s for s in only_a) and not any("b_val" in s for s in only_a)
        only_b = [c_lines[n - 1] for n in prov["lattice:i:b"]]
        assert any("b_val" in s for s in only_b) and not any("a_val" in s for s in only_b)


@pytest.mark.parametrize("which", PROGRAMS)
def test_looplet_tags_resolve_to_an_index(lowered, which):
    kernel = lowered["looplets", which]
    _, indices, tensors = PROGRAMS[which]
    prov = trace_provenance(kernel.trace)
    steps = kernel.trace.steps
    for tag, info in _strategy_tags(prov).items():
        style, number = tag.split(":")[1:]
        assert info.kind == "looplet" and info.style == style and number.isdigit()
        assert info.index in indices, tag
        # the step that lowered it: lower:<Style>, its note ends with the tag
        assert info.step is not None and steps[info.step].stage == f"lower:{style}"
        assert steps[info.step].note.rstrip().endswith(f"[{tag}]")
        assert set(info.operands) <= tensors, (tag, info.operands)
    if which == "spmv":
        stepper = [i for t, i in prov.info.items() if i.style == "Stepper"]
        assert stepper and all(i.index == "j" and i.operands == ("A",) for i in stepper)
        lookup = [i for t, i in prov.info.items() if i.style == "Lookup" and i.index == "i"]
        assert lookup and set(lookup[0].operands) == {"y", "A"}
    else:
        stepper = [i for t, i in prov.info.items() if i.style == "Stepper" and i.operands]
        assert any(set(i.operands) == {"a", "b"} for i in stepper)


def _check_marks_lie_inside(text, marks, prov):
    lines = text.splitlines()
    assert marks == sorted(marks, key=lambda m: (m.line, m.start if m.start is not None else -1))
    for m in marks:
        assert isinstance(m, Mark) and 1 <= m.line <= len(lines), m
        line = lines[m.line - 1]
        if m.start is None:
            assert m.end is None and m.text == line
        else:
            assert 0 <= m.start < m.end <= len(line), m
            assert line[m.start:m.end] == m.text, (m, line)
        assert m.tags and len(set(m.tags)) == len(m.tags)
        assert all(t in prov for t in m.tags), m
    spans = [(m.line, m.start, m.end) for m in marks if m.start is not None]
    for (l1, s1, e1), (l2, s2, e2) in zip(spans, spans[1:]):
        assert l1 < l2 or e1 <= s2, "marks on one line do not overlap"


@pytest.mark.parametrize("strategy, which", CASES)
def test_marks_lie_inside_every_step_text(lowered, strategy, which):
    kernel = lowered[strategy, which]
    session = explore(kernel.trace)
    prov = session.provenance()
    marked = 0
    for i in range(len(session)):
        text = session.program_text(i)
        marks = program_marks(text, prov, i)
        _check_marks_lie_inside(text, marks, prov)
        marked += bool(marks)
    assert marked >= len(session) // 2


@pytest.mark.parametrize("strategy, which", CASES)
def test_marks_find_accesses_and_loops(lowered, strategy, which):
    kernel = lowered[strategy, which]
    session = explore(kernel.trace)
    prov = session.provenance()
    program, indices, tensors = PROGRAMS[which]
    # the parsed program: every sparse operand's access is marked, with a tag of one of its indices
    text = session.program_text(0)
    marks = {m.text: m for m in program_marks(text, prov, 0)}
    sparse = {"A"} if which == "spmv" else {"a", "b"}
    for name in sparse:
        access = next(k for k in marks if k.startswith(name + "["))
        info = prov.info[marks[access].tags[0]]
        assert info.index in re.findall(r"\w+", access[2:]), (access, info)
        if strategy == "lattice" or which == "spmv":
            assert name in info.operands
    # a step with loops: each loop over an index is marked with a tag of that index
    loop_steps = [i for i in range(len(session))
                  if re.search(r"^\s*(forall|for) \w+", session.program_text(i), re.M)]
    assert loop_steps
    for i in loop_steps:
        loops = [m for m in program_marks(session.program_text(i), prov, i)
                 if re.match(r"(forall|for|while) ", m.text)]
        assert loops, session.steps[i].stage
        for m in loops:
            index = re.match(r"(?:forall|for|while) (\w+)", m.text).group(1)
            assert all(prov.info[t].index == index for t in m.tags), m
    # the C: every tagged C line is marked, with its tags, and nothing else
    c_step = next(i for i, s in enumerate(session.steps) if s.stage == "emit-c")
    c_text = session.program_text(c_step)
    c_marks = program_marks(c_text, prov, c_step)
    assert {m.line for m in c_marks} == {n for lines in prov.values() for n in lines}
    for m in c_marks:
        assert m.start is None and set(m.tags) == {t for t, ns in prov.items() if m.line in ns}


_TYPES = {"int64", "int64_t", "int32", "int32_t", "float64", "double", "float32", "float", "const",
          "restrict", "in", "out", "inout", "uint8", "uint8_t", "bool"}


def _words(line):
    return [w for w in re.findall(r"\w+", line) if w not in _TYPES]


@pytest.mark.parametrize("strategy, which", CASES)
def test_ir_lines_take_the_tags_of_the_c_lines_they_match(lowered, strategy, which):
    kernel = lowered[strategy, which]
    session = explore(kernel.trace)
    prov = session.provenance()
    c_lines = prov.c_text.splitlines()
    ir_step = next(i for i, s in enumerate(session.steps) if any(a.kind == "ir" for a in s.artifacts)
                   or s.stage in ("imperative", "lower"))
    text = session.program_text(ir_step)
    assert text != prov.c_text
    marks = program_marks(text, prov, ir_step)
    assert len(marks) >= len(prov) // 2 and all(m.start is None for m in marks)
    for m in marks:
        tagged = [n for n in range(1, len(c_lines) + 1)
                  if set(m.tags) == {t for t, ns in prov.items() if n in ns}]
        assert any(_words(c_lines[n - 1]) == _words(m.text) for n in tagged), m


def test_looplet_ir_values_do_not_make_a_text_c():
    """A looplet step's program ending in a value ``${A_val[qA]}`` is looplet IR, not C: its
    accesses are still marked (they were not, the brace made the text look like C)."""
    S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    kernel = ss.lower("y[i] = A[i, j] * x[j]", strategy="looplets",
                      A=ss.Tensor.from_scipy(S, name="A"), x=np.arange(5.0))
    session = explore(kernel.trace)
    prov = session.provenance()
    valued = [i for i in range(len(session)) if "${" in session.program_text(i)
              and "y.lvl1[i][]" in session.program_text(i)]
    assert valued
    for i in valued:
        marks = program_marks(session.program_text(i), prov, i)
        y = [m for m in marks if m.text == "y.lvl1[i][]"]
        assert y and prov.info[y[0].tags[0]].index == "i" and "y" in prov.info[y[0].tags[0]].operands


def test_looplets_waiting_to_be_lowered_take_the_tag_of_their_lowering(lowered):
    kernel = lowered["looplets", "spmv"]
    session = explore(kernel.trace)
    prov = session.provenance()
    seen = 0
    for i in range(len(session)):
        for m in program_marks(session.program_text(i), prov, i):
            head = re.match(r"(Thunk|Sequence|Stepper|Spike|Switch)\[", m.text)
            if head:
                info = prov.info[m.tags[0]]
                assert info.style == head.group(1) and info.step >= i and len(m.tags) == 1
                seen += 1
    assert seen >= 3


def test_points_cases_and_loop_bodies_share_their_points_tag(lowered):
    """In the lattice CFIR of a + b, a case's accesses (the written one too) and the body of
    the loop over a alone take that point's tag first, the colour of its C lines."""
    kernel = lowered["lattice", "add"]
    session = explore(kernel.trace)
    prov = session.provenance()
    i = next(k for k, s in enumerate(session.steps) if s.stage == "cfir")
    text = session.program_text(i)
    lines = text.splitlines()
    marks = program_marks(text, prov, i)
    by_line = {}
    for m in marks:
        by_line.setdefault(m.line, []).append(m)
    checked = 0
    for n, line in enumerate(lines, 1):
        case = re.match(r"\s*case (a0|b0|a0 b0):", line)
        if case:
            want = "lattice:i:" + "∩".join(x[0] for x in case.group(1).split())
            assert [m.tags[0] for m in by_line[n]] == [want] * len(by_line[n]), (line, by_line[n])
            assert len(by_line[n]) == 1 + line.count("[i]")  # the case, the written and the read
            checked += 1
        loop = re.match(r"\s*while i <- (a0|b0):", line)
        if loop:
            want = f"lattice:i:{loop.group(1)[0]}"
            body = by_line[n + 1]
            assert [m.text for m in body] == ["z[i]", f"{loop.group(1)[0]}[i]"]
            assert all(m.tags[0] == want for m in body), body
            checked += 1
    assert checked == 5


@pytest.mark.parametrize("strategy, which", CASES)
def test_tag_info_is_read_from_data_not_from_printed_text(lowered, strategy, which):
    """Every tag's kind, index, operands and style come from the origins the lowering recorded:
    a trace whose notes, before/after texts and artifact names are scrambled gives the same."""
    trace = lowered[strategy, which].trace
    prov = trace_provenance(trace)
    origins = _c_artifact(trace).data["origins"]
    assert set(origins) == set(prov), "every tag has an origin"
    for tag, info in prov.info.items():
        o = origins[tag]
        assert (info.kind, info.index, list(info.operands), info.style) == \
            (o["kind"], o["index"], o["operands"], o["style"])
        if info.kind == "expression":   # (a node of the expression tree: which one, as recorded)
            assert list(info.nodes) == o["nodes"] == [tag.split(":")[1]]
            continue
        assert info.kind == strategy.rstrip("s")  # lattice / looplet
        assert info.index in PROGRAMS[which][1]
        assert set(info.operands) <= PROGRAMS[which][2]
    if strategy == "looplets":
        lowered_steps = [s for s in trace.steps if isinstance(s.data, dict) and s.data.get("tag")]
        assert lowered_steps and all(prov.info[s.data["tag"]].step == trace.steps.index(s)
                                     for s in lowered_steps if s.data["tag"] in prov)

    def scramble(a):
        return Artifact(a.kind, "?", a.text if a.kind == "c" else "?", None if a.kind == "c" else "digraph{}", a.data)
    scrambled = Trace([Step(s.stage, note="?", before_text="?", after_text="?", data=s.data,
                            artifacts=[scramble(a) for a in s.artifacts]) for s in trace.steps])
    assert trace_provenance(scrambled).info == prov.info


def test_a_looplet_tag_names_the_tensors_its_rule_lowers(lowered):
    """SpMV by looplets: the Stepper (or Jumper) on j walks A only; x is a Lookup."""
    prov = trace_provenance(lowered["looplets", "spmv"].trace)
    on_j = [prov.info[t] for t in prov if prov.info[t].index == "j"]
    assert on_j and all(i.kind == "looplet" for i in on_j)
    walking = [i for i in on_j if i.style != "Lookup"]
    assert walking and all(i.operands == ("A",) for i in walking), on_j


def test_provenance_helpers():
    p = Provenance({"lattice:i:U": [3, 1, 2], "lattice:i:A": [2]})
    assert p.info["lattice:i:A"] == TagInfo("lattice:i:A"), "no origin given: nothing is guessed from the tag"
    assert p["lattice:i:U"] == [1, 2, 3]
    assert list(p.only("lattice:i:A")) == ["lattice:i:A"] and p.only(None) is p
    assert p.widest_first(["lattice:i:A", "lattice:i:U"])[0] == "lattice:i:U"
    assert program_marks("", p) == [] and program_marks("forall i:", None) == []


def test_a_lattice_texts_points_and_loops_take_the_tags_the_lowering_recorded():
    """The lattice's artifact records the tags of its text's lines (``data["line_tags"]``), and the
    program pane marks its points and loops with them instead of joining the names printed there
    (issue 29, item 5). Read from the text, the point ``[x_2 U | A]`` took its loop's tag and the loop
    ``while i <- U ∩ x_2`` every tag of ``i`` (the printed order is not the tag's, ``x_2∩U``)."""
    trace = ss.lower("y[i] = A[i, j] * x[j] + x[i]", "lattice", A="csr", x="sv").trace
    prov = trace_provenance(trace)
    step = next(s for s in trace.steps if s.stage == "lattice" and s.after_text.startswith("lattice at i"))
    art = step.artifacts[0]
    assert art.data["line_tags"]["2"] == ["lattice:i:A∩x_2", "lattice:i:x_2∩U"]
    marks = {m.text: m.tags for m in program_marks(step.after_text, prov) if m.text.startswith(("[", "while"))}
    assert marks == {"[x_2 U | A] P": ("lattice:i:A∩x_2",), "[U | A] P": ("lattice:i:A",),
                     "while i <- U ∩ x_2": ("lattice:i:x_2∩U",), "while i <- U": ("lattice:i:U",)}
    assert all(prov[t] for tags in marks.values() for t in tags)


def test_a_cfir_texts_loops_and_cases_take_the_tags_the_lowering_recorded():
    """The CFIR's artifact records its loop and case lines' tags too (``data["line_tags"]``); a text
    with recorded tags is marked by them, whatever names it prints."""
    trace = ss.lower("C[i, j] = A[i, j] + B[i, j]", "lattice", A="csr", B="csr", C="csr").trace
    prov = trace_provenance(trace)
    step = next(s for s in trace.steps if s.stage == "cfir")
    lines, recorded = step.after_text.splitlines(), step.artifacts[0].data["line_tags"]
    heads = {lines[int(n) - 1].strip(): tags for n, tags in recorded.items()}
    assert heads["while j <- A1 ∩ B1:"] == ["lattice:j:A∩B"] and heads["case A1: C[i, j] = A[i, j]"] == ["lattice:j:A"]
    assert all(prov[t] for tags in recorded.values() for t in tags)
    # every loop and case line is tagged, and only those, under a workspace too (SpGEMM's)
    for t in (trace, ss.lower("C[i, j] = A[i, k] * B[k, j]", "lattice", A="csr", B="csr", C="csr").trace):
        cfir = next(s for s in t.steps if s.stage == "cfir")
        lines = cfir.after_text.splitlines()
        heads = {n for n, x in enumerate(lines, 1) if x.strip().startswith(("while ", "case "))}
        assert {int(n) for n in cfir.artifacts[0].data["line_tags"]} == heads
    text = "forall j:\n  while j <- A0:\n    y[j] = A[j]"
    info = {"lattice:j:Q": TagInfo("lattice:j:Q", "lattice", "j", ("A",))}
    marks = program_marks(text, Provenance({"lattice:j:Q": [1]}, info, texts={text: {2: ["lattice:j:Q"]}},
                                           spans={text: {2: [(2, 15, "lattice:j:Q", "loop")]}}))
    assert [(m.text, m.tags) for m in marks if m.line == 2] == [("while j <- A0", ("lattice:j:Q",))]
    # (with no spans recorded, no head is guessed from the text)
    marks = program_marks(text, Provenance({"lattice:j:Q": [1]}, info, texts={text: {2: ["lattice:j:Q"]}}))
    assert [m for m in marks if m.line == 2] == []


XOR = ss.user_function("xorf", lambda a, b: a + b if (a == 0) != (b == 0) else 0.0,
                       "return (x != 0) != (y != 0) ? x + y : 0.0;", algebra="(x | y) & !(x & y)", dtype="float64")


def test_the_columns_of_points_loops_and_cases_are_read_from_the_trace():
    """The lattice and CFIR artifacts record where in a line each point, loop and case is printed
    (``data["line_spans"]``) and the program pane marks them there. A case that tests values
    (``case b0 (values b[i])``, an exclusive or's) is no case to the pattern an older trace is read
    by: it marked no case, and the line's accesses took the loop's first case's point (b∩c)."""
    trace = ss.lower("a[i] = xorf(b[i], c[i])", "lattice", b="sv", c="sv", functions={"xorf": XOR}).trace
    prov = trace_provenance(trace)
    for stage in ("lattice", "cfir"):
        art = next(s for s in trace.steps if s.stage == stage).artifacts[0]
        lines = art.text.splitlines()
        spans = art.data["line_spans"]
        # every recorded span is the head its tag names, inside its line
        assert spans and all(0 <= a < b <= len(lines[int(n) - 1]) and t in art.data["line_tags"][n]
                             for n, v in spans.items() for a, b, t, _ in v)
    cfir = next(s for s in trace.steps if s.stage == "cfir")
    n = next(k for k, x in enumerate(cfir.after_text.splitlines(), 1) if x.strip().startswith("case b0 (values b[i])"))
    marks = [(m.text, m.tags[0]) for m in program_marks(cfir.after_text, prov) if m.line == n]
    assert marks[0] == ("case b0 (values b[i])", "lattice:i:b") and ("b[i]", "lattice:i:b") in marks, marks
    # the same trace as saved before the spans were recorded: no head is guessed from the text (a
    # pattern missed this case, and its line's accesses took the loop's first case's point, b∩c)
    old = Trace.from_json(trace.to_json())
    for s in old.steps:
        for a in s.artifacts:
            if isinstance(a.data, dict):
                a.data.pop("line_spans", None)
    fallback = [(m.text, m.tags[0]) for m in program_marks(cfir.after_text, trace_provenance(old)) if m.line == n]
    assert not any(t.startswith("case") for t, _ in fallback) and ("b[i]", "lattice:i:b∩c") not in fallback, fallback
    # lattice lines still marked by their recorded spans: the points and loops, one tag each
    lattice = next(s for s in trace.steps if s.stage == "lattice")
    heads = {m.text: m.tags for m in program_marks(lattice.after_text, prov) if m.text.startswith(("[", "while"))}
    assert heads["while i <- b ∩ c"] == ("lattice:i:b∩c",) and heads["[b | ] P"] == ("lattice:i:b",), heads


def _strip_parts(trace):
    """``trace`` as saved before the looplet steps recorded their texts' parts."""
    old = Trace.from_json(trace.to_json())
    for s in old.steps:
        if isinstance(s.data, dict):
            s.data = {k: v for k, v in s.data.items() if k not in ("before_spans", "after_spans")} or None
    return old


def test_a_looplet_texts_parts_are_marked_where_its_printer_put_them(lowered):
    """A looplet lowering's steps record where each loop, access and looplet of their texts is
    printed and what it is (``data["before_spans"]``, ``["after_spans"]``), and the program pane
    marks them there (issue 29, item 5): a matrix named ``Run``, which the patterns once read as a
    Run looplet waiting to be lowered, is marked as ``A`` is. Nothing is found by pattern in an
    older trace's texts."""
    S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    trace = ss.lower("y[i] = Run[i, j] * x[j]", strategy="looplets", Run=ss.Tensor.from_scipy(S, name="Run"),
                     x=np.arange(5.0)).trace
    plain = lowered["looplets", "spmv"].trace

    def lowering(t):   # (a call given a scipy matrix adds a foreign-layout step to the shared kernel's trace)
        return [s.stage for s in t.steps if s.stage != "foreign-layout"]
    assert lowering(trace) == lowering(plain)
    prov, plain_prov = trace_provenance(trace), trace_provenance(plain)
    recorded = [k for k, s in enumerate(trace.steps) if isinstance(s.data, dict) and "after_spans" in s.data]
    assert len(recorded) >= 8
    run_marked = 0
    for k in recorded:
        text = trace.steps[k].after_text
        lines = text.splitlines()
        for n, parts in trace.steps[k].data["after_spans"].items():
            for a, b, about, role in parts:   # each part is the node it says, where it says
                part = lines[int(n) - 1][a:b]
                if role == "loop":   # (a looplet loop, or the parsed notation's forall)
                    assert part.split()[:2] in (["for", about["index"]], ["forall", about["index"]]), (part, about)
                elif role == "reduce":
                    assert part.endswith(f"[{', '.join(about['indices'])}]"), (part, about)
                else:
                    assert part.endswith("]") and (f"[{about['index']}" in part if role == "looplet"
                                                   else part.startswith(about["tensor"])), (part, about)
        marks = program_marks(text, prov, k)
        _check_marks_lie_inside(text, marks, prov)
        # the same marks as the SpMV of a matrix named A, with the same tags
        assert [(m.line, m.text.replace("Run", "A"), m.tags) for m in marks] == \
            [(m.line, m.text, m.tags) for m in program_marks(plain.steps[k].after_text, plain_prov, k)]
        run_marked += sum(m.text.startswith("Run[") for m in marks)
    assert run_marked >= 5
    # a trace saved before the records: nothing is found in its texts by pattern
    old = _strip_parts(trace)
    fallback = [m.text for k in recorded for m in program_marks(old.steps[k].after_text, trace_provenance(old), k)]
    assert not any(t.endswith("]") for t in fallback), fallback


def test_index_notation_texts_are_marked_where_their_printers_put_them(lowered):
    """The parsed index notation, the concrete index notation, a lattice's and the CFIR's texts record
    their parts too (issue 29 §5): the lattice strategy's SpMV of a matrix named ``Run`` is marked as
    that of one named ``A``, where the patterns took ``Run[i, j]`` for a looplet (so older traces
    leave it unmarked)."""
    S = sp.random(6, 5, density=0.4, format="csr", random_state=0)
    trace = ss.lower("y[i] = Run[i, j] * x[j]", strategy="lattice", Run=ss.Tensor.from_scipy(S, name="Run"),
                     x=np.arange(5.0)).trace
    plain = lowered["lattice", "spmv"].trace
    prov, plain_prov = trace_provenance(trace), trace_provenance(plain)
    stages = [s.stage for s in trace.steps]
    shown = [(stages.index(stage), side) for stage, side in (("parse", "after"), ("concretize", "after"),
                                                             ("concretize", "before"), ("lattice", "after"),
                                                             ("cfir", "after"))]
    for k, side in shown:
        step = trace.steps[k]
        assert side + "_spans" in step.data, (step.stage, side)
        text = getattr(step, side + "_text")
        marks = program_marks(text, prov, k)
        _check_marks_lie_inside(text, marks, prov)
        renamed = [(m.line, m.text.replace("Run", "A"), tuple(t.replace("Run", "A") for t in m.tags)) for m in marks]
        assert renamed == [(m.line, m.text, m.tags)
                           for m in program_marks(getattr(plain.steps[k], side + "_text"), plain_prov, k)]
        assert any(m.text == "Run[i, j]" and "lattice:j:Run∩x" in m.tags for m in marks), marks
        assert any(m.text.startswith("sum[j]") or m.text.startswith("forall j") for m in marks)
    # read by pattern (a trace saved before), Run[i, j] was not marked
    old = _strip_parts(trace)
    fallback = [m.text for k, side in shown
                for m in program_marks(getattr(old.steps[k], side + "_text"), trace_provenance(old), k)]
    assert fallback and "Run[i, j]" not in fallback


@pytest.mark.parametrize("which", PROGRAMS)
def test_lattice_and_cfir_texts_are_marked_from_their_printers_record(lowered, which):
    """A lattice's heading (``lattice at i``), a CFIR's forall heads and both texts' accesses are
    marked where their printers recorded them (issue 29 §5). The trace with its parts stripped (as
    saved before they were recorded) keeps the marks of its points', loops' and cases' recorded
    heads alone: no access is found in its text by pattern."""
    trace = lowered["lattice", which].trace
    prov, old = trace_provenance(trace), _strip_parts(trace)
    old_prov = trace_provenance(old)
    shown = [k for k, s in enumerate(trace.steps) if s.stage in ("lattice", "cfir")]
    assert len(shown) >= 2
    for k in shown:
        step = trace.steps[k]
        assert step.data["after_spans"], step.stage
        marks = program_marks(step.after_text, prov, k)
        _check_marks_lie_inside(step.after_text, marks, prov)
        heading = [m for m in marks if m.text.startswith("lattice at ")]
        if step.stage == "lattice":
            index = step.data["index"]
            assert [(m.line, m.start, m.text) for m in heading] == [(1, 0, f"lattice at {index}")]
            assert set(heading[0].tags) == {t for t in prov if prov.info[t].index == index}
        else:
            assert not heading and any(m.text.startswith("forall ") for m in marks)
        assert any(m.text.endswith("]") and not m.text.startswith("[") for m in marks)   # (accesses)
        fallback = program_marks(old.steps[k].after_text, old_prov, k)
        assert all(m in marks for m in fallback)
        assert not any(m.text.endswith("]") and not m.text.startswith("[") for m in fallback), fallback


def test_one_text_printed_at_two_steps_of_two_tensors_keeps_each_steps_parts():
    """``z[i] = a[i] + b[i]`` by looplets prints ``Lookup(i -> z.lvl1[i])[i] = Stepper[i]`` once for
    ``a``'s Stepper and once for ``b``'s: each step's text marks its own looplet, lowered at the
    next step, not the last recorded one's (issue 29 §5: the parts were keyed by text)."""
    trace = ss.lower("z[i] = a[i] + b[i]", strategy="looplets", **_tensors("add")).trace
    prov = trace_provenance(trace)
    by_text = {}
    for k, s in enumerate(trace.steps):
        if isinstance(s.data, dict) and "after_spans" in s.data:
            by_text.setdefault(s.after_text, []).append(k)
    twice = {t: ks for t, ks in by_text.items() if "Stepper[i]" in t and
             len({json.dumps(trace.steps[k].data["after_spans"]) for k in ks}) > 1}
    assert twice, "the trace prints one Stepper text for both operands"
    for text, steps in twice.items():
        tensors = set()
        for k in steps:
            recorded = [about["tensor"] for parts in trace.steps[k].data["after_spans"].values()
                        for _, _, about, role in parts if role == "looplet" and about["style"] == "Stepper"]
            marks = [m for m in program_marks(text, prov, k) if m.text == "Stepper[i]"]
            assert len(recorded) == 1 and len(marks) == 1, (k, recorded, marks)
            info = prov.info[marks[0].tags[0]]
            assert info.operands == tuple(recorded) and info.step == k + 1, (k, info)
            tensors.add(recorded[0])
        assert tensors == {"a", "b"}
