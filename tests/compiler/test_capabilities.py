"""compiler.capabilities says what each strategy reads and assembles; the strategies agree."""

from __future__ import annotations

import pytest

import compiler
from compiler.capabilities import Capabilities, capabilities
from compiler.errors import StrategyError
from compiler.format import Format
from compiler.levels import Element
from compiler.levels.level import level_class
from compiler.schedule import COMMANDS

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


def test_each_strategy_says_which_schedule_commands_it_takes():
    assert capabilities("lattice").schedule_commands == ("reorder", "precompute", "parallelize", "split", "fuse",
                                                         "pos")
    assert capabilities("looplets").schedule_commands == ("privatize",)
    assert capabilities("lattice").schedule and capabilities("looplets").schedule
    # together they take every command of the shared schedule, each exactly once
    assert sorted(capabilities("lattice").schedule_commands + capabilities("looplets").schedule_commands) == \
        sorted(COMMANDS)
    with pytest.raises(StrategyError, match="schedule_commands is a tuple of the commands"):
        Capabilities("s", (), (), True)
    assert not Capabilities("s", (), ()).schedule


# (each command naming what the program has not: the strategy that takes it refuses it for that,
# before building any kernel; the other refuses it as the other's)
MISNAMED = {"reorder": ("q",), "precompute": ("q", "w", "q[i]"), "parallelize": ("q",),
            "split": ("q", "q0", "q1", 4), "fuse": ("q", "r", "s"), "pos": ("q", "qp", "x"), "privatize": ("q",)}


@pytest.mark.parametrize("strategy", ["lattice", "looplets"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_strategy_applies_exactly_the_schedule_commands_it_says(strategy, command):
    taken = command in capabilities(strategy).schedule_commands
    with pytest.raises(StrategyError) as e:
        compiler.lower("y[i] = x[i]", strategy, x="dense", y="dense",
                       options={"schedule": [(command, *MISNAMED[command])]})
    other = next(s for s in ("lattice", "looplets") if s != strategy)
    refused = f"is a command of the {other} strategy (strategy='{other}')"
    assert (refused in str(e.value)) == (not taken), str(e.value)
    assert f"{command}(" in str(e.value)


def test_each_command_says_which_kinds_of_program_it_applies_to():
    """Issue 31: privatize was offered for index notation under looplets and always refused there
    (index notation's output is written at its own loops' coordinates): the capabilities say so."""
    looplets, lattice = capabilities("looplets"), capabilities("lattice")
    assert looplets.commands_for("loop program") == ("privatize",) and looplets.commands_for("index notation") == ()
    assert "so no update scatters" in looplets.why_not_command("privatize", "index notation")
    assert looplets.why_not_command("privatize", "loop program") is None
    assert lattice.commands_for("index notation") == lattice.schedule_commands
    with pytest.raises(StrategyError, match="a kind of program is one of index notation, loop program, not 'einsum'"):
        looplets.commands_for("einsum")
    with pytest.raises(StrategyError, match=r"command_kinds holds \(command, kinds, why\) of its schedule's commands"):
        Capabilities("s", (), (), ("privatize",), (("reorder", ("loop program",), "why"),))


def test_an_unknown_strategy_is_named():
    with pytest.raises(StrategyError, match="unknown strategy 'taco'; known: lattice, looplets"):
        capabilities("taco")


def test_why_not_names_the_level_and_the_strategy():
    caps = Capabilities("lattice", ("Dense",), ("Dense",), ("reorder",))
    assert caps.why_not("SparseCOO(2)", output=True) == "the lattice strategy cannot assemble a SparseCOO output level"
    assert caps.why_not("Dense", output=True) is None
