"""The lattice's, CFIR's and schedule's printers say where they printed each part (issue 29 §5).

A lattice's text records its heading (``lattice at i``) and the accesses of its algebra and case
expressions, a CFIR's its forall heads, the accesses it writes and reads (a case's value tests, a
workspace) and a shape operator's CFIR its loop heads with their tags, a schedule's ``such that``
statement its derived loops and accesses, all printed in the walk that prints the text: each part
is exactly the characters printed for its node. No C is built here (the printers run on the plan).
"""

from compiler import user_function
from compiler.format import csr, dense, sparse_vector
from compiler.lattice.cfir_builder import build_cfir
from compiler.lattice.cin import concretize
from compiler.lattice.derived import Fuse, Pos, Split, SuchThat
from compiler.lattice.plan import Setup
from compiler.lattice.seqcfir import Assign, Read, While, loop_spans
from compiler.lattice.sequences import Concat, Level
from compiler.notation import parse
from compiler.trace import Step, text_of

XOR = user_function("xorf", lambda a, b: a + b if (a == 0) != (b == 0) else 0.0,
                    "return (x != 0) != (y != 0) ? x + y : 0.0;", algebra="(x | y) & !(x & y)", dtype="float64")
SV, CSR = sparse_vector(), csr()
PLANS = {
    "union": ("a[i] = b[i] + c[i]", {"b": SV, "c": SV, "a": dense(1)}),
    "spmv": ("y[i] = A[i, j] * x[j] + x[i]", {"A": CSR, "x": SV}),
    "spgemm": ("C[i, j] = A[i, k] * B[k, j]", {"A": CSR, "B": CSR, "C": CSR}),
    "xor": ("a[i] = xorf(b[i], c[i])", {"b": SV, "c": SV}),
    "product": ("a[i] = b[i] * (c[i] + d[i])", {"b": SV, "c": SV, "d": SV}),
}


def _plan(which):
    program, formats = PLANS[which]
    setup = Setup.create(parse(program, {"xorf": XOR}), formats)
    return setup, build_cfir(setup.statement, setup)


def _parts(node):
    """``[(line, printed characters, about, role)]`` of ``node``'s recorded parts, after checking its
    text is the one a trace shows (``text_of``: its ``pretty()``)."""
    text, parts = node.printed_parts()
    assert text == text_of(node)
    lines = text.splitlines()
    return [(int(n), lines[int(n) - 1][a:b], about, role) for n, v in parts.items() for a, b, about, role in v]


def _check_each_part_is_its_node(parts):
    for _, printed, about, role in parts:
        if role == "access":
            assert printed == f"{about['tensor']}[{', '.join(about['indices'])}]", (printed, about)
        elif role == "lattice":
            assert printed == f"lattice at {about['index']}"
        elif role == "loop":
            assert printed == f"forall {about['index']}"
        else:
            assert role == "reduce" and printed.endswith(f"[{', '.join(about['indices'])}]"), (printed, role)


def test_a_lattices_heading_and_accesses_are_where_it_printed_them():
    setup, _ = _plan("product")
    L = setup.lattices[0]
    parts = _parts(L)
    _check_each_part_is_its_node(parts)
    assert [(n, printed, role) for n, printed, _, role in parts if n <= 2] == [
        (1, "lattice at i", "lattice"), (1, "b[i]", "access"), (1, "c[i]", "access"), (1, "d[i]", "access"),
        (2, "b[i]", "access"), (2, "c[i]", "access"), (2, "d[i]", "access")]
    # (an algebra names an access of an inner forall too: x[j] is read by the case at i)
    for which in PLANS:
        setup, _ = _plan(which)
        for L in setup.lattices:
            parts = _parts(L)
            _check_each_part_is_its_node(parts)
            heading = [(n, printed) for n, printed, _, role in parts if role == "lattice"]
            assert heading == [(1, f"lattice at {L.index}")]
            algebra = str(L.algebra)
            assert sum(printed in algebra for n, printed, _, role in parts if n == 1 and role == "access") \
                == algebra.count("[")


def test_a_cfirs_foralls_and_accesses_are_where_it_printed_them():
    _, cfir = _plan("union")
    assert _parts(cfir) == [
        (1, "forall i", {"index": "i"}, "loop"),
        (4, "a[i]", {"tensor": "a", "indices": ["i"], "mode": "update"}, "access"),
        (4, "b[i]", {"tensor": "b", "indices": ["i"], "mode": "read"}, "access"),
        (4, "c[i]", {"tensor": "c", "indices": ["i"], "mode": "read"}, "access"),
        (5, "a[i]", {"tensor": "a", "indices": ["i"], "mode": "update"}, "access"),
        (5, "b[i]", {"tensor": "b", "indices": ["i"], "mode": "read"}, "access"),
        (6, "a[i]", {"tensor": "a", "indices": ["i"], "mode": "update"}, "access"),
        (6, "c[i]", {"tensor": "c", "indices": ["i"], "mode": "read"}, "access"),
        (8, "a[i]", {"tensor": "a", "indices": ["i"], "mode": "update"}, "access"),
        (8, "b[i]", {"tensor": "b", "indices": ["i"], "mode": "read"}, "access"),
        (10, "a[i]", {"tensor": "a", "indices": ["i"], "mode": "update"}, "access"),
        (10, "c[i]", {"tensor": "c", "indices": ["i"], "mode": "read"}, "access")]
    for which in PLANS:
        _check_each_part_is_its_node(_parts(_plan(which)[1]))


def test_a_cases_value_tests_and_a_workspace_are_parts_of_a_cfir():
    """A case testing values (an exclusive or's) prints the accesses it tests, an omitted one too
    (read by its loop's other cases); a workspace prints the access the producer writes."""
    _, cfir = _plan("xor")
    lines = str(cfir).splitlines()
    omitted = next(n for n, x in enumerate(lines, 1) if x.strip() == "case b0 c0 (values b[i], c[i]): omit")
    assert [(printed, about["mode"]) for n, printed, about, _ in _parts(cfir) if n == omitted] == \
        [("b[i]", "read"), ("c[i]", "read")]
    alone = next(n for n, x in enumerate(lines, 1) if x.strip().startswith("case (values b[i]):"))
    assert [printed for n, printed, _, _ in _parts(cfir) if n == alone] == ["b[i]", "a[i]", "b[i]"]
    _, cfir = _plan("spgemm")
    lines = str(cfir).splitlines()
    alloc = next(n for n, x in enumerate(lines, 1) if x.strip().startswith("alloc workspace"))
    assert [(printed, about["mode"]) for n, printed, about, _ in _parts(cfir) if n == alloc] == [("w[j]", "update")]


def test_a_schedules_such_that_statement_records_its_derived_loops():
    s = SuchThat(concretize(parse("y[i] = A[i, j] * x[j]")),
                 (Fuse("i", "j", "f"), Pos("f", "fpos", "A"), Split("fpos", "f0", "f1", 16)))
    parts = _parts(s)
    _check_each_part_is_its_node(parts)
    assert [(n, printed) for n, printed, _, _ in parts] == [(1, "forall f0"), (2, "forall f1"), (3, "y[i]"),
                                                           (3, "A[i, j]"), (3, "x[j]")]
    # a step given it records them (a schedule's steps showed them unmarked: its printer raised)
    assert Step("schedule:split", after=s).data["after_spans"]["1"][0][:2] == [0, 9]


def test_a_sequence_cfirs_loop_heads_carry_their_tags():
    """A shape operator's CFIR records each ``while`` head with its code's tag; read by pattern,
    a head up to its first colon (``while k <- rev(j_A)[48``) was marked, or none."""
    a, b = Level("a", 0, "compressed", 4), Level("b", 0, "compressed", 3)
    loop = While("k", Concat(a, b), (), Assign("c", ("k",), Read("a", (a,))))
    text, spans = text_of(loop), loop_spans(loop)
    (start, end, tag, role), = spans["1"]
    assert text.splitlines()[0][start:end] == f"while k <- {Concat(a, b)}"
    assert tag == f"lattice:k:{Concat(a, b)}".replace(" ", "")   # (no spaces in a tag: they separate tags)
    assert role == "loop" and list(spans) == ["1"]
