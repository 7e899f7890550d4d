"""Kernels with several outputs: one call builds each, and returns them in a named tuple.

A loop program may write several tensors (Finch's multiple left-hand sides: a BFS step's
next frontier and parents). Its :class:`~compiler.runtime.Lowered` lists one ``Lowered``
per output (``outputs``), all of the same function; a call binds the inputs once, allocates
and checks each output as it would the one output of a kernel, runs the function once and
builds every output from its arrays. The result is an :class:`Outputs`: a tuple with a field
per output, in the program's order.

>>> T = outputs_type(("_F", "P"))
>>> r = T((1, 2))
>>> r._F, r.P, r, r._asdict()
(1, 2, Outputs(_F=1, P=2), {'_F': 1, 'P': 2})
>>> F, P = r
"""

from __future__ import annotations

import functools


class Outputs(tuple):
    """The outputs of a kernel, in the program's order, each also a field of its name.

    As :func:`collections.namedtuple`'s tuples (``_fields``, ``_asdict``, ``_replace``,
    unpacking), except that a field may be any name a program gives a tensor, ``_F`` too
    (a namedtuple refuses names with a leading underscore). Build the class with :func:`outputs_type`.
    """

    __slots__ = ()
    _fields: tuple = ()

    def __new__(cls, values):
        values = tuple(values)
        if len(values) != len(cls._fields):
            raise TypeError(f"{cls.__name__} holds {len(cls._fields)} outputs ({', '.join(cls._fields)}), "
                            f"not {len(values)}")
        return super().__new__(cls, values)

    @classmethod
    def _make(cls, values):
        return cls(values)

    def _asdict(self) -> dict:
        return dict(zip(self._fields, self))

    def _replace(self, **changes):
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise ValueError(f"no output named {', '.join(sorted(unknown))}; the outputs are {', '.join(self._fields)}")
        return type(self)(changes.get(f, v) for f, v in zip(self._fields, self))

    def __getnewargs__(self):
        return (tuple(self),)

    def __reduce__(self):
        return (_rebuild, (self._fields, tuple(self)))

    def __repr__(self) -> str:
        return f"Outputs({', '.join(f'{f}={v!r}' for f, v in zip(self._fields, self))})"


@functools.lru_cache(maxsize=256)
def outputs_type(names: tuple) -> type:
    """The :class:`Outputs` class with a field for each of ``names``."""
    attrs = {"__slots__": (), "_fields": tuple(names)}
    for k, name in enumerate(names):
        attrs[name] = property(lambda self, k=k: tuple.__getitem__(self, k), doc=f"output {name}")
    return type("Outputs", (Outputs,), attrs)


def _rebuild(names, values):
    return outputs_type(tuple(names))(values)


def owner(pname: str, names) -> str | None:
    """The output among ``names`` whose array or size parameter ``pname`` is (:mod:`compiler.binding`'s
    naming: ``F_val``, ``F0_pos``, ``F0_size``), else None.

    >>> owner("F0_tbl", {"F", "P"}), owner("P_val", {"F", "P"}), owner("A1_idx", {"F", "P"})
    ('F', 'P', None)
    """
    for name in names:
        if pname == f"{name}_val":
            return name
        rest = pname[len(name):] if pname.startswith(name) else ""
        head, sep, _ = rest.partition("_")
        if sep and head.isdigit():
            return name
    return None


def run(kernel, runner, tensors: dict) -> Outputs:
    """One call of ``kernel`` (a :class:`~compiler.runtime.Kernel` whose ``lowered.outputs``
    lists several) with ``runner`` (the compiled function, or the IR interpreter)."""
    views = kernel.output_views()
    inputs = kernel.bind(tensors)
    states = []
    for view in views:
        inputs, state = view.prepare_output(inputs, tensors)
        states.append(state)
    args = kernel.input_args(inputs)
    for state in states:
        args.update(state.args)
    results = runner(**args)
    built = [view.build_output(state, results, inputs, tensors) for view, state in zip(views, states)]
    return outputs_type(tuple(view.output for view in views))(built)
