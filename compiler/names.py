"""Fresh names: one generator shared by the compiler's passes and the C emitter.

>>> fresh = FreshNames({"t", "x"})
>>> fresh("t"), fresh("t"), fresh("y"), fresh("y")
('t_2', 't_3', 'y', 'y_2')
>>> "t_3" in fresh.taken
True
"""

from __future__ import annotations


class FreshNames:
    """Hands out names built from a base that collide with nothing in ``taken`` nor with each other.

    A name handed out joins ``taken``; a clash gets the suffix ``_2``, ``_3``, ...
    """

    def __init__(self, taken=()):
        self.taken = set(taken)

    def __call__(self, base: str) -> str:
        name, k = base, 2
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        return name


__all__ = ["FreshNames"]
