"""Exceptions raised by sparsescope, each naming the problem in the user's terms.

Every error derives from :class:`SparsescopeError` and from the builtin exception
a Python user would expect (``ValueError`` for bad data, ``TypeError`` for bad
dtypes, ...), so ``except ValueError`` keeps working.

>>> try:
...     raise FormatError("level 1 (SparseList) of A: idx is not sorted in row 3")
... except ValueError as e:
...     print(e)
level 1 (SparseList) of A: idx is not sorted in row 3
"""



class SparsescopeError(Exception):
    """Base class of every error sparsescope raises on purpose."""


class FormatError(SparsescopeError, ValueError):
    """Level data that does not describe a valid tensor (unsorted, out of range, wrong length)."""


class ShapeError(SparsescopeError, ValueError):
    """Mismatched shapes or index extents."""


class AxisError(ShapeError, IndexError):
    """An axis out of range for an array's dimensions (an ``IndexError`` too, as the Array API's ``expand_dims``
    raises, and numpy's ``AxisError``)."""


class DTypeError(SparsescopeError, TypeError):
    """An unsupported dtype, or an operator applied to dtypes it does not accept."""


class ParseError(SparsescopeError, ValueError):
    """A malformed expression. The message shows the expression with a caret under the fault."""

    def __init__(self, message: str, source: str = "", offset: int = 0):
        self.reason = message
        self.source = source
        self.offset = offset
        if source:
            message = f"{message}\n    {source}\n    {' ' * offset}^"
        super().__init__(message)


class UsageError(SparsescopeError, TypeError, ValueError):
    """An argument of the wrong kind or value, or a missing one: a program that is not text, a tensor
    not given, an unknown strategy (a ``TypeError`` and a ``ValueError``, as either may be expected)."""


class StrategyError(SparsescopeError, NotImplementedError):
    """A format or construct that a lowering strategy cannot serve."""


#: how the looplets strategy's refusal of a shape operator ends: the lattice strategy's sequence
#: expressions lower what no wrapper expresses (lower() drops it where it tried that strategy first)
LATTICE_HINT = "; or lower it with strategy='lattice'"


class CompilerNotFoundError(SparsescopeError, RuntimeError):
    """No working C compiler: the message says what to install."""


class CompileError(SparsescopeError, RuntimeError):
    """The C compiler rejected generated code (a bug in sparsescope: please report it)."""


class UserCodeError(SparsescopeError, ValueError):
    """The C body of a user function that the C compiler rejects (the message quotes its error)."""


class KernelError(SparsescopeError, RuntimeError):
    """A checked kernel detected an out-of-bounds access or invalid input at run time."""


class nesting_guard:   # noqa: N801 (used as a function: ``with nesting_guard(program):``)
    """Turn Python's RecursionError, from an expression nested hundreds deep (the passes walk
    expressions recursively), into a UsageError that names the program (the start of its
    text, or its kind). A class, not a generator: every ``lower()`` enters one.

    >>> with nesting_guard("y[i] = x[i] + x[i] + x[i] + x[i] + x[i] + x[i]"):
    ...     def f(n): return f(n + 1)
    ...     f(0)
    Traceback (most recent call last):
    ...
    compiler.errors.UsageError: y[i] = x[i] + x[i] + x[i] + x[i] + x[...: the program nests too deeply for the compiler's recursive passes (hundreds of terms or parentheses in one expression); split it into several statements
    """

    __slots__ = ("program",)

    def __init__(self, program):
        self.program = program

    def __enter__(self):
        return None

    def __exit__(self, kind, error, tb):
        if kind is None or not issubclass(kind, RecursionError):
            return False
        program = self.program
        text = program if isinstance(program, str) else getattr(program, "__name__", type(program).__name__)
        what = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"{what}: the program nests too deeply for the compiler's recursive passes (hundreds of "
                         f"terms or parentheses in one expression); split it into several statements") from None
