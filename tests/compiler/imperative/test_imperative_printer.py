from compiler.imperative import (Assign, Block, Cast, Comment, Const, If, Select, UnOp, Var,
                                 While, and_, or_, pretty)
from compiler.imperative.examples import csr_spmv, filter_nonzeros


def test_spmv_listing():
    text = pretty(csr_spmv())
    assert text.splitlines()[0].startswith("kernel spmv(int64 m, in int64 A_pos[]")
    assert "        for (int64 pA = A_pos[i]; pA < A_pos[i + 1]; pA++) {" in text
    assert "            acc += A_val[pA] * x[A_idx[pA]];" in text
    assert str(csr_spmv()) == text


def test_growables_print_their_length():
    text = pretty(filter_nonzeros())
    assert "out int64 B_nnz = 0, growable int64 B_idx[B_nnz]" in text
    assert "grow B_idx to B_nnz + 1;" in text


def test_precedence_and_parentheses():
    a, b, c = Var("a"), Var("b"), Var("c")
    assert pretty((a + b) * c) == "(a + b) * c"
    assert pretty(a + b * c) == "a + b * c"
    assert pretty(a - (b - c)) == "a - (b - c)"
    assert pretty((a - b) - c) == "a - b - c"
    assert pretty(or_(and_(a, b), c)) == "(a && b) || c"
    assert pretty(and_(a < b, b < c)) == "a < b && b < c"
    assert pretty((a & b).eq(0)) == "(a & b) == 0"
    assert pretty(a - Const(-1, "int64")) == "a - (-1)"
    assert pretty(UnOp("-", UnOp("-", a))) == "- -a"
    assert pretty(Cast("float64", a + b)) == "(float64)(a + b)"
    assert pretty(Select(a < b, a, b) + 1) == "(a < b ? a : b) + 1"


def test_else_if_chain_is_flat_and_nesting_indents():
    x, i = Var("x"), Var("i")
    chain = If(i < 1, [Assign(x, 1)], If(i < 2, [Assign(x, 2)], If(i < 3, [Assign(x, 3)])))
    assert pretty(chain) == "\n".join([
        "if (i < 1) {", "    x = 1;",
        "} else if (i < 2) {", "    x = 2;",
        "} else if (i < 3) {", "    x = 3;", "}"])
    loop = While(x > 0, [Comment("count down"), Block((Assign(x, x - 1),))])
    assert pretty(loop) == "while (x > 0) {\n    // count down\n    x = x - 1;\n}"


def test_a_node_prints_by_the_installed_printer_even_when_only_ir_is_imported():
    """``str(node)`` calls the printer the printer module installs (ir does not import it back):
    importing ``compiler.imperative.ir`` alone still installs it, through the package."""
    import subprocess
    import sys
    code = ("from compiler.imperative.ir import Var, Assign; "
            "print(str(Assign(Var('x'), Var('x') + 1)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "x = x + 1;"
    x = Var("x")
    assert str(While(x > 0, [Assign(x, x - 1)])) == pretty(While(x > 0, [Assign(x, x - 1)]))
