"""The names of generated C: the functions a kernel may call, the names no variable may take, and
the check of a name the user chooses (a tensor, an index, a schedule's new variable).

>>> is_c_name("i0"), is_c_name("while"), "int64_t" in C_LIBRARY_NAMES
(True, False, True)
"""

from __future__ import annotations

import keyword
import re

from ..dtypes import VALUE_DTYPES

#: C math functions a :class:`Call` may name without a helper
MATH_FUNCTIONS = ("fmin", "fmax", "pow", "ldexp", "sqrt", "exp", "log", "fabs", "isnan", "sin", "cos", "tan", "asin",
                  "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "expm1", "log1p", "log2",
                  "log10", "floor", "ceil", "trunc", "nearbyint", "atan2", "hypot", "copysign",
                  "nextafter", "nextafterf",
                  # <complex.h>'s (the math functions of a complex value are the c-prefixed ones)
                  "cabs", "creal", "cimag", "conj", "csqrt", "cexp", "clog", "cpow", "csin", "ccos", "ctan",
                  "casin", "cacos", "catan", "csinh", "ccosh", "ctanh", "casinh", "cacosh", "catanh")
#: functions the C backend defines itself: ``lowest_bit(w)`` is the index of the lowest
#: set bit of a nonzero word (sorting a workspace's coordinates through a bitmap)
BIT_FUNCTIONS = ("lowest_bit",)
#: functions the C backend defines itself for parallel loops: ``thread_count()`` is how many
#: threads a parallel loop may run on, ``thread_id()`` which one runs the calling iteration
#: (1 and 0 without OpenMP, and in the interpreter)
THREAD_FUNCTIONS = ("thread_count", "thread_id")
#: searches of a sorted index array (a :class:`BufferArg` first) that the C backend defines once per
#: index dtype it searches (``seek_int64``): see :mod:`compiler.imperative.search`
SEARCH_FUNCTIONS = ("seek", "seek_back", "lower_bound")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while bool true false NULL""".split())


#: names no generated variable may take: C's keywords (and Python's, for the IR's Python helpers)
RESERVED = _C_KEYWORDS | frozenset(keyword.kwlist)
#: names the generated C takes from its headers, or defines for itself: a variable named so
#: would hide them (``int64_t i = ...`` after ``int64_t int64_t = ...`` does not compile)
C_LIBRARY_NAMES = frozenset("""int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
    intptr_t uintptr_t size_t ptrdiff_t jmp_buf INT8_MIN INT8_MAX INT16_MIN INT16_MAX INT32_MIN
    INT32_MAX INT64_MIN INT64_MAX UINT8_MAX UINT16_MAX UINT32_MAX UINT64_MAX SIZE_MAX INT32_C
    INT64_C UINT64_C NAN INFINITY MADV_HUGEPAGE KERNEL_OUT_OF_MEMORY malloc calloc realloc free
    madvise setjmp longjmp isfinite isinf memset memcpy memmove abort resize alloc_array
    length_product length_sum omp_get_max_threads omp_get_thread_num""".split()) | \
    frozenset(MATH_FUNCTIONS + BIT_FUNCTIONS + THREAD_FUNCTIONS) | \
    frozenset(f"{f}_{t}" for f in SEARCH_FUNCTIONS for t in VALUE_DTYPES)
# a tensor's arrays are named A_val, A1_pos, A0_size, A2_idx0 (see compiler.binding.array_name)
_ARRAY_NAME = re.compile(r"^(.*?)[0-9]*_[a-z][a-z0-9]*$")


def is_c_name(name) -> bool:
    """Whether ``name`` can name a variable of generated C (an ASCII identifier, not a keyword).
    A name the user chooses is checked by :func:`c_name_problem` too."""
    return isinstance(name, str) and bool(_IDENT.match(name)) and name not in RESERVED


def c_name_problem(name, tensors=()) -> str | None:
    """Why ``name`` cannot name a variable of the generated C of a kernel over ``tensors``, or None.

    >>> c_name_problem("i0"), c_name_problem("while"), c_name_problem("int64_t")
    (None, 'it is a keyword of C', "the generated C uses int64_t (a name of C's headers or of the kernel's runtime)")
    >>> c_name_problem("A1_pos", ["A", "x"])
    "the generated C names A's arrays so (A<level>_<kind>: A_val, A1_pos, A0_size)"
    """
    if not isinstance(name, str) or not _IDENT.match(name):
        return "use ASCII letters, digits and underscores"
    if name in RESERVED:
        return "it is a keyword of C"
    if name in C_LIBRARY_NAMES:
        return f"the generated C uses {name} (a name of C's headers or of the kernel's runtime)"
    if name.startswith("__"):
        return "C keeps names beginning with __ for itself"
    m = _ARRAY_NAME.match(name)
    if m and m.group(1) in tensors:
        t = m.group(1)
        return f"the generated C names {t}'s arrays so ({t}<level>_<kind>: {t}_val, {t}1_pos, {t}0_size)"
    return None


def check_name(name: str, what: str = "name") -> str:
    """Return ``name`` if it can be a C identifier, else raise ``ValueError``."""
    if not is_c_name(name):
        raise ValueError(f"{what} {name!r} is not a valid identifier for generated C")
    return name
