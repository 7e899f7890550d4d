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
        # base -> the suffix its next name is looked for from: names are only ever added to
        # ``taken``, so every suffix below it stays taken (looking from ``_2`` again each time made
        # a kernel's thousandth ``step_stop`` cost a thousand tests)
        self.next_suffix: dict[str, int] = {}

    def clashes(self, name: str) -> bool:
        """Whether ``name`` may not be handed out."""
        return name in self.taken

    def __call__(self, base: str) -> str:
        k = self.next_suffix.get(base, 1)
        name = base if k == 1 else f"{base}_{k}"
        while self.clashes(name):
            k += 1
            name = f"{base}_{k}"
        self.next_suffix[base] = k + 1
        self.taken.add(name)
        return name


__all__ = ["FreshNames"]
