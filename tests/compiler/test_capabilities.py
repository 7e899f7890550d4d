"""compiler.capabilities says what each strategy reads and assembles; the strategies agree."""

from __future__ import annotations

import pytest

import compiler
from compiler.capabilities import Capabilities, capabilities
from compiler.errors import StrategyError
from compiler.format import Format
from compiler.levels import Element
from compiler.levels.level import level_class

LEVEL_NAMES = ["Dense", "SparseList", "SparseBand", "SparseBlockList", "RunList", "SparseRunList",
               "SparseInterval", "SparsePoint", "SparseByteMap", "SparseCOO", "SparseHash"]


def vector_format(name: str) -> Format:
    cls = level_class(name)
    root = cls(1, Element(0.0)) if name == "SparseCOO" else cls(Element(0.0))
    return Format(root)


def lowers(strategy: str, **tensors) -> bool:
    try:
        compiler.lower("y[i] = x[i]", strategy, **tensors)
    except StrategyError:
        return False
    return True


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_a_strategy_reads_exactly_the_levels_it_says(strategy, name):
    caps = capabilities(strategy)
    assert lowers(strategy, x=vector_format(name), y="dense") == (name in caps.reads)
    assert (caps.why_not(name, output=False) is None) == (name in caps.reads)


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("name", LEVEL_NAMES)
def test_a_strategy_assembles_exactly_the_output_levels_it_says(strategy, name):
    caps = capabilities(strategy)
    assert lowers(strategy, x="dense", y=vector_format(name)) == (name in caps.assembles)


def test_the_schedule_is_the_lattice_strategys():
    assert capabilities("lattice").schedule and not capabilities("looplets").schedule
    with pytest.raises(StrategyError):
        compiler.lower("y[i] = x[i]", "looplets", x="dense", y="dense", options={"schedule": [("parallelize", "i")]})


def test_an_unknown_strategy_is_named():
    with pytest.raises(StrategyError, match="unknown strategy 'taco'; known: lattice, looplets"):
        capabilities("taco")


def test_why_not_names_the_level_and_the_strategy():
    caps = Capabilities("lattice", ("Dense",), ("Dense",), True)
    assert caps.why_not("SparseCOO(2)", output=True) == "the lattice strategy cannot assemble a SparseCOO output level"
    assert caps.why_not("Dense", output=True) is None
