"""The index-notation parser: reductions (explicit, implicit, einsum per term) and error messages."""

import math

import pytest

from compiler.algebra import choose, lookup
from compiler.user_functions import user_function
from compiler.errors import ParseError
from compiler.notation import Access, Assign, Call, Literal, Reduce, parse


def p(text, **kw):
    return str(parse(text, **kw))


@pytest.mark.parametrize("text,expected", [
    ("y[i] = A[i, j] * x[j]", "y[i] = sum[j](A[i, j] * x[j])"),
    ("y[i] = A[i,j]*x[j] + d[i]", "y[i] = sum[j](A[i, j] * x[j]) + d[i]"),
    ("y[i] = x[j] - d[i] + B[i, k]", "y[i] = sum[j](x[j]) - d[i] + sum[k](B[i, k])"),
    ("y[i] = (A[i, j] + d[i]) * 2", "y[i] = sum[j]((A[i, j] + d[i]) * 2)"),
    ("C[i, j] = A[i, k] * B[k, j]", "C[i, j] = sum[k](A[i, k] * B[k, j])"),
    ("A[i, j] = B[i, k, l] * C[l, j] * D[k, j]", "A[i, j] = sum[k, l](B[i, k, l] * C[l, j] * D[k, j])"),
    ("y[i] += A[i, j] * x[j]", "y[i] += sum[j](A[i, j] * x[j])"),
    ("y[i] min= A[i, j] + x[j]", "y[i] min= min[j](A[i, j] + x[j])"),
    ("y[i] max= A[i, j] + d[i]", "y[i] max= max[j](A[i, j] + d[i])"),
    ("y[i] *= x[i]", "y[i] *= x[i]"),
    ("y[i] |= A[i, j]", "y[i] |= bitor[j](A[i, j])"),
    ("y[i] &= x[i]", "y[i] &= x[i]"),
    ("y[i] ^= x[i]", "y[i] ^= x[i]"),
    ("D[i] <<min>>= d[i]", "D[i] min= d[i]"),
    ("P[k] <<choose(0)>>= B[k, j]", "P[k] <<choose(0)>>= choose(0)[j](B[k, j])"),
    ("y[i] <<overwrite>>= x[i]", "y[i] <<overwrite>>= x[i]"),
    ("s = x[i] * y[i]", "s[] = sum[i](x[i] * y[i])"),
    ("s[] = x[i]", "s[] = sum[i](x[i])"),
    ("s[] max= x[i]", "s[] max= max[i](x[i])"),
    # reduction calls
    ("y[i] = max(A[i, j])", "y[i] = max[j](A[i, j])"),
    ("s = sum(A[i, j] * sum(B[j, k]))", "s[] = sum[i, j](A[i, j] * sum[k](B[j, k]))"),
    ("y[i] = sum(A[i, j]) + sum(B[i, j])", "y[i] = sum[j](A[i, j]) + sum[j](B[i, j])"),
    ("y[i] = sum(A[i, j]) * x[j]", "y[i] = sum[j](A[i, j] * x[j])"),
    ("y[i] = sum[j](A[i, j] * max(B[j, k]))", "y[i] = sum[j](A[i, j] * max[k](B[j, k]))"),
    ("y[i] = sum(x[i])", "y[i] = x[i]"),
    ("s = any(A[i, j] < 0)", "s[] = any[i, j](A[i, j] < 0)"),
    ("y[i] = all(A[i, j]) and prod(B[i, j]) > 1", "y[i] = all[j](A[i, j]) and prod[j](B[i, j]) > 1"),
    # the inner call reduces every index it can, so minimax needs the explicit form
    ("opt = max(min(A[i, j]))", "opt[] = min[i, j](A[i, j])"),
    ("opt = max[i](min[j](A[i, j]))", "opt[] = max[i](min[j](A[i, j]))"),
    ("y[i] = min[j](A[i, j] + x[j])", "y[i] = min[j](A[i, j] + x[j])"),
    # calls, literals, precedence
    ("y[i] = min(a[i], b[i], c[i])", "y[i] = min(min(a[i], b[i]), c[i])"),
    ("y[i] = pow(x[i], 2) + ldexp(x[i], e[i])", "y[i] = pow(x[i], 2) + ldexp(x[i], e[i])"),
    ("y[i] = xor(a[i], b[i])", "y[i] = a[i] ^ b[i]"),
    ("y[i] = 1e-3 * x[i] + inf - nan + true + false + .5 + 2.", "y[i] = 0.001 * x[i] + inf - nan + true + false + 0.5 + 2.0"),
    ("y[i] = -3 * x[i]", "y[i] = -3 * x[i]"),
    ("y[i] = -x[i] - -inf", "y[i] = -x[i] - -inf"),
    ("y[i] = !a[i] | !b[i]", "y[i] = !a[i] | !b[i]"),
    ("y[i] = not a[i] or not b[i]", "y[i] = !a[i] or !b[i]"),
    ("y[i] = not a[i] == b[i]", "y[i] = !(a[i] == b[i])"),
    ("y[i] = a[i] & b[i] == c[i]", "y[i] = a[i] & b[i] == c[i]"),
    ("y[i] = a[i] - (b[i] - c[i])", "y[i] = a[i] - (b[i] - c[i])"),
    ("y[i] = (a[i] - b[i]) - c[i]", "y[i] = a[i] - b[i] - c[i]"),
    ("y[i] = a[i] or b[i] and c[i]", "y[i] = a[i] or b[i] and c[i]"),
    ("y[i] = (a[i] or b[i]) and c[i]", "y[i] = (a[i] or b[i]) and c[i]"),
    ("y[i] = choose(0)(a[i], b[i])", "y[i] = choose(0)(a[i], b[i])"),
    ("y[i, j] = A[i, j]\n  + B[j, i]", "y[i, j] = A[i, j] + B[j, i]"),
    # a 0-d tensor on the right side, as TACO's beta() (it was refused: "empty index list")
    ("y[i] = A[i, j] * x[j] * s[]", "y[i] = sum[j](A[i, j] * x[j] * s[])"),
    ("t[] = s[] + 1", "t[] = s[] + 1"),
])
def test_parse_and_print(text, expected):
    assert p(text) == expected
    assert p(expected) == expected  # printing is a fixed point


def test_tree_shape():
    a = parse("y[i] = A[i, j] * x[j] + 1")
    add, mul = lookup("+"), lookup("*")
    assert a == Assign(Access("y", ["i"]), None,
                       Call(add, (Reduce(add, ["j"], Call(mul, (Access("A", ["i", "j"]), Access("x", ["j"])))),
                                  Literal(1))))
    assert parse("y[i] = -3 * x[i]").rhs.args[0] == Literal(-3)
    assert parse("y[i] = -(3) * x[i]").rhs.args[0] == Call(lookup("neg"), (Literal(3),))
    lit = parse("y[i] = x[i] + nan").rhs.args[1]
    assert math.isnan(lit.value)
    assert parse("y[i] = x[i] + 2").rhs.args[1].value == 2 and isinstance(parse("y[i] = x[i] + 2.0").rhs.args[1].value, float)


def test_user_functions():
    gcd = user_function("gcd", math.gcd, "return 0;", identity=0, associative=True, commutative=True)
    f3 = user_function("f3", lambda a, b, c: a, "return x;", arity=3)
    assert p("y[i] = gcd(a[i], b[i])", functions={"gcd": gcd}) == "y[i] = gcd(a[i], b[i])"
    assert p("y[i] = gcd(A[i, j])", functions={"gcd": gcd}) == "y[i] = gcd[j](A[i, j])"
    assert p("y[i] <<gcd>>= A[i, j]", functions={"gcd": gcd}) == "y[i] <<gcd>>= gcd[j](A[i, j])"
    assert p("y[i] = f3(a[i], b[i], c[i])", functions={"f3": f3}) == "y[i] = f3(a[i], b[i], c[i])"
    assert parse("y[i] = gcd(a[i], b[i])", functions={"gcd": gcd}).rhs.op is gcd
    # user functions shadow builtins
    mymin = user_function("min", min, "return x < y ? x : y;", associative=True)
    assert parse("y[i] = min(a[i], b[i])", functions={"min": mymin}).rhs.op == mymin


def error(text, **kw):
    with pytest.raises(ParseError) as info:
        parse(text, **kw)
    return str(info.value)


def caret(message):
    """The column of the caret in a ParseError message."""
    lines = message.splitlines()
    return lines[-1].index("^") - 4, lines[-2][4:]


@pytest.mark.parametrize("text,reason,at", [
    ("y[i] = A[i, j * x[j]", "unbalanced bracket: '[' is not closed", "* x[j]"),
    ("y[i = x[i]", "unbalanced bracket", "= x[i]"),
    ("y[i] = (x[i] + 1", "unbalanced parenthesis: '(' at column 7 is not closed", ""),
    ("y[i] = min(x[i], z[i]", "unbalanced parenthesis: '(' at column 10 is not closed", ""),
    ("y[i] = x[i] + 1)", "unexpected ')' after the end of the expression", ")"),
    ("y[i] = x[i] z[i]", "unexpected 'z' after the end", "z[i]"),
    ("y[i] = x", "x is no index of the statement, so it has no value: write x[] for a 0-d tensor", ""),
    ("y[i] = x + z[i]", "x is no index of the statement", " + z[i]"),
    ("y[i] = x[i,]", "expected an index name, found ']'", "]"),
    ("y[i] = x[i] @ 2", "unknown operator '@'", "@ 2"),
    ("y[i] = foo(x[i])", "unknown function 'foo'", "foo(x[i])"),
    ("y[i] = mn(x[i], z[i])", "did you mean min", "mn("),
    ("y[i] <<mx>>= x[i]", "unknown operator 'mx'; did you mean max", "mx>>="),
    ("y[i, j, i] = A[i, j]", "index i is repeated in the output y[...]", "i] = A[i, j]"),
    ("y[i] x[i]", "'=' is missing", "x[i]"),
    ("y[i]", "'=' is missing", ""),
    ("y[i] == x[i]", "'=' is missing", "== x[i]"),
    ("y[i] =", "expected an expression after the assignment", ""),
    ("y[i] = x[i] +", "expected an expression, found the end", ""),
    ("y[i] -= x[i]", "-= is not supported", "-= x[i]"),
    ("y[i] /= x[i]", "/= is not supported", "/= x[i]"),
    ("y[i] foo= x[i]", "unknown update foo=", "foo= x[i]"),
    ("y[i] = a[i] < b[i] < c[i]", "comparisons cannot be chained", "< c[i]"),
    ("y[i] = pow(x[i])", "pow takes 2 argument(s), got 1 (it is not associative", "pow(x[i])"),
    ("y[i] = sqrt(x[i], z[i])", "sqrt takes 1 argument(s), got 2", "sqrt("),
    ("y[i] = sum[i](x[i])", "index i is an output index and cannot be reduced", "i](x[i])"),
    ("y[i] = sum[k](x[i])", "index k does not appear in the body", "k](x[i])"),
    ("y[i] = sum[j, j](A[i, j])", "index j is listed twice", "j](A[i, j])"),
    ("y[i] = pow[j](A[i, j])", "pow cannot reduce", "pow[j]"),
    ("y[i] = sum[](A[i, j])", "needs at least one index", "[](A[i, j])"),
    ("y[i] <<pow>>= A[i, j]", "index j must be reduced with the update operator pow", "<<pow>>="),
    ("y[i] <<sqrt>>= x[i]", "sqrt takes 1 argument(s); an update needs a binary operator", "<<sqrt"),
    ("y[i] = choose[j](A[i, j])", "choose needs a parameter", "[j]"),
    ("= x[i]", "expected the output tensor", "= x[i]"),
    ("y[i] = ()", "expected an expression inside the parentheses", ")"),
    ("y[i] = x[i] + 99999999999999999999", "does not fit in uint64", "99999"),
    ("y[i] = x[i] + -18446744073709551615", "-18446744073709551615 does not fit in int64", "1844"),
    ("y[i] = x[i] and", "expected an expression", ""),
    ("y[i] = x[i] + and", "unexpected 'and'", "and"),
])
def test_errors_point_at_the_fault(text, reason, at):
    message = error(text)
    assert reason in message.splitlines()[0], message
    col, shown = caret(message)
    assert shown == text.replace("\n", " ")
    assert shown[col:].startswith(at), (message, shown[col:])
    if at == "":
        assert col >= len(text.rstrip()) - 1


def test_error_is_a_value_error_with_fields():
    with pytest.raises(ValueError) as info:
        parse("y[i] = x")
    e = info.value
    assert e.source == "y[i] = x" and e.offset == 8 and e.reason.startswith("x is no index of the statement")


def test_bad_functions_argument():
    with pytest.raises(TypeError, match="must be an Operator"):
        parse("y[i] = f(x[i])", functions={"f": abs})
    with pytest.raises(TypeError):
        parse(3)


def test_choose_parameter_forms():
    a = parse("P[k] <<choose(-1)>>= B[k, j]")
    assert a.op == choose(-1) and a.rhs.op == choose(-1)
    assert str(a) == "P[k] <<choose(-1)>>= choose(-1)[j](B[k, j])"
    assert parse(str(a)) == a


def test_parse_records_a_trace_step():
    from compiler import Trace, parse as parse_

    t = Trace()
    program = parse_("y[i] = A[i, j] * x[j]", trace=t)
    assert t.stages() == ["parse"]
    assert t[0].after == program
    assert t[0].before_text == "y[i] = A[i, j] * x[j]"
    assert t[0].after_text == "y[i] = sum[j](A[i, j] * x[j])"


def test_parse_error_is_recorded_then_raised():
    import pytest as _pytest

    from compiler import ParseError, Trace, parse as parse_

    t = Trace()
    with _pytest.raises(ParseError):
        parse_("y[i] = A[i, j", trace=t)
    assert t[0].stage == "parse" and "^" in t[0].error


def test_an_expression_nested_hundreds_deep_is_a_parse_error_not_a_recursion_error():
    with pytest.raises(ParseError, match="the expression nests too deeply to parse"):
        parse("y[i] = " + "(" * 400 + "x[i]" + ")" * 400)


def test_a_reduction_given_two_expressions_says_it_takes_one():
    with pytest.raises(ParseError, match=r"a reduction max\[...\]\(...\) takes one expression, the body it "
                                         r"reduces; combine two with an operator inside it"):
        parse("y[i] = max[j](A[i, j], x[j])")


def test_a_statement_is_parsed_once():
    """A statement of builtin operators is parsed once (its AST is immutable), by each of the oracle,
    the sequence interpreter and the lowering; one with user functions, or in error, every time,
    and a trace records its parse step each time."""
    from compiler.trace import Trace
    text = "y[i] = A[i, j] * x[j] + max[k](B[i, k])"
    assert parse(text) is parse(text) and parse(text) == parse(text + " ")
    gcd = user_function("gcd", math.gcd, "return 0;", identity=0, associative=True, commutative=True)
    with_gcd = "y[i] = gcd(A[i, j], 2)"
    assert parse(with_gcd, {"gcd": gcd}) == parse(with_gcd, {"gcd": gcd})
    assert parse(with_gcd, {"gcd": gcd}) is not parse(with_gcd, {"gcd": gcd})
    for _ in range(2):
        with pytest.raises(ParseError, match="unknown"):
            parse(with_gcd)
        t = Trace()
        assert parse(text, trace=t) is parse(text) and t.stages() == ["parse"] and t[0].after_text == str(parse(text))
