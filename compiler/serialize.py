"""A JSON codec for IR nodes, so that traces can be saved, diffed and shared.

IR nodes are frozen dataclasses registered with :func:`node`. :func:`encode`
turns a value built from nodes, tuples, lists, dicts, numbers (including inf and
nan), strings, numpy scalars and numpy arrays into plain JSON data, and
:func:`decode` rebuilds it.

>>> from dataclasses import dataclass
>>> @node
... @dataclass(frozen=True)
... class Pair:
...     a: object
...     b: object
>>> data = encode(Pair(1.5, (float("inf"), "x")))
>>> decode(data) == Pair(1.5, (float("inf"), "x"))
True
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import math
from typing import Any

import numpy as np

_REGISTRY: dict[str, type] = {}


def _key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def node(cls: type) -> type:
    """Register a dataclass (or Enum) so :func:`decode` can rebuild it from JSON."""
    _REGISTRY[_key(cls)] = cls
    return cls


def _lookup(key: str) -> type:
    cls = _REGISTRY.get(key)
    if cls is None:
        # The defining module may not be imported yet in this process.
        module, _, _ = key.rpartition(".")
        while module and cls is None:
            try:
                importlib.import_module(module)
            except ImportError:
                pass
            cls = _REGISTRY.get(key)
            module, _, _ = module.rpartition(".")
    if cls is None:
        raise ValueError(f"cannot decode a trace node of unknown type {key!r}")
    return cls


def encode(value: Any) -> Any:
    """Encode ``value`` as JSON-compatible data."""
    if isinstance(value, np.generic):   # (first: np.float64 is a float, but its repr is no float's)
        return {"_np": value.dtype.name, "v": encode(value.item())}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, enum.Enum):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"_float": repr(value)}
    if isinstance(value, complex):   # (JSON has no complex number: its two parts, NaN and inf kept)
        return {"_complex": [encode(value.real), encode(value.imag)]}
    if isinstance(value, np.ndarray):
        return {"_nd": value.dtype.name, "shape": list(value.shape),
                "v": [encode(x) for x in value.ravel().tolist()]}
    if isinstance(value, enum.Enum):
        return {"_enum": _key(type(value)), "v": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {"_t": _key(type(value))}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    if isinstance(value, tuple):
        return {"_tuple": [encode(x) for x in value]}
    if isinstance(value, list):
        return [encode(x) for x in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {"_dict": {k: encode(v) for k, v in value.items()}}
        return {"_pairs": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, (frozenset, set)):
        return {"_set": [encode(x) for x in sorted(value, key=repr)], "frozen": isinstance(value, frozenset)}
    raise TypeError(f"cannot encode {type(value).__name__} in a trace")


def decode(data: Any) -> Any:
    """Rebuild a value produced by :func:`encode`."""
    if isinstance(data, list):
        return [decode(x) for x in data]
    if not isinstance(data, dict):
        return data
    if "_t" in data:
        cls = _lookup(data["_t"])
        kwargs = {k: decode(v) for k, v in data.items() if k != "_t"}
        fields = {f.name: f for f in dataclasses.fields(cls)}
        init = {k: v for k, v in kwargs.items() if fields[k].init}
        obj = cls(**init)
        for k, v in kwargs.items():
            if not fields[k].init:
                object.__setattr__(obj, k, v)
        return obj
    if "_float" in data:
        return float(data["_float"])
    if "_complex" in data:
        return complex(*(decode(x) for x in data["_complex"]))
    if "_np" in data:
        return np.dtype(data["_np"]).type(decode(data["v"]))
    if "_nd" in data:
        return np.array(decode(data["v"]), dtype=data["_nd"]).reshape(data["shape"])
    if "_enum" in data:
        return _lookup(data["_enum"])[data["v"]]
    if "_tuple" in data:
        return tuple(decode(x) for x in data["_tuple"])
    if "_dict" in data:
        return {k: decode(v) for k, v in data["_dict"].items()}
    if "_pairs" in data:
        return {decode(k): decode(v) for k, v in data["_pairs"]}
    if "_set" in data:
        items = [decode(x) for x in data["_set"]]
        return frozenset(items) if data["frozen"] else set(items)
    raise ValueError(f"malformed trace data: {sorted(data)}")
