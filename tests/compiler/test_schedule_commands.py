"""compiler.schedule (named apart from tests/compiler/looplets/test_schedule.py: one basename per test module): the one schedule both strategies read; each applies its own commands."""

from __future__ import annotations

import pathlib
import re

import pytest

import compiler.lattice
import compiler.lattice.schedule
from compiler.errors import StrategyError
from compiler.schedule import COMMANDS, Command, Privatize, Schedule, as_schedule, signature
from explorer.rebuild import parse_schedule

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_paths_users_import_it_from_keep_working():
    assert compiler.lattice.Schedule is Schedule is compiler.lattice.schedule.Schedule
    assert compiler.lattice.schedule.as_schedule is as_schedule and compiler.lattice.schedule.Command is Command


def test_no_strategy_imports_the_others_schedule():
    for strategy, other in (("lattice", "looplets"), ("looplets", "lattice")):
        # (from ..looplets.schedule import ..., from compiler.lattice.schedule import ..., import ...)
        imports = re.compile(rf"^\s*(from|import)\s+(\.\.|compiler\.){other}(\.schedule\b|\s+import\s+.*\bschedule\b)",
                             re.M)
        for path in (ROOT / "compiler" / strategy).glob("*.py"):
            found = imports.search(path.read_text())
            assert found is None, f"{path.name}: {found.group(0).strip()}"


@pytest.mark.parametrize("schedule", [
    Schedule().reorder("i", "k", "j").precompute("j", "w"),
    Schedule().split("i", "i0", "i1", 16).pos("j", "jpos", "A").parallelize("i0", races="atomics"),
    Schedule().precompute(("i", "j"), "w", format="dense").fuse("i", "j", "f"),
    Schedule().privatize("bins", copies=2, workspace=False),
    Schedule().privatize("bins"),
])
def test_a_schedule_prints_as_the_editor_reads_it_back(schedule):
    # (the commands as the trace's steps and the refusals print them are what a user pastes into the
    # schedule editor: privatize's workspace=False was read back as the text 'False')
    text = "; ".join(str(c) for c in schedule.commands)
    assert repr(schedule) == f"Schedule({text.replace('; ', ', ')})"
    assert as_schedule(parse_schedule(text)) == schedule


def test_every_command_has_a_signature_the_editor_reads_back():
    for name in COMMANDS:
        written = signature(name, editable=True)
        (parsed,) = parse_schedule(written)
        assert parsed[0] == name and "None" not in written and "*" not in written
    assert signature("privatize") == "privatize(tensor, copies=4, workspace=True)"
    with pytest.raises(StrategyError, match="unknown scheduling command 'tile'; the strategies' schedules know"):
        signature("tile")


@pytest.mark.parametrize("args, message", [
    ((), r"privatize\(\) needs the output's name"),
    ((3,), r"privatize\(3\) needs the output's name"),
    (("bins", 4, True, 1), r"needs the output's name, e.g. privatize\('bins', copies=4\)"),
    (("bins", 17), "copies is the number of tables, an integer from 2 to 16, not 17"),
    (("bins", True), "copies is the number of tables, an integer from 2 to 16, not True"),
    (("bins", 2.0), "copies is the number of tables, an integer from 2 to 16, not 2.0"),
    (("bins", 4, "yes"), "workspace is True or False, not 'yes'"),
])
def test_privatize_arguments_are_checked_in_the_users_terms(args, message):
    with pytest.raises(StrategyError, match=message):
        Privatize.of(Command("privatize", args))


def test_privatize_fills_in_its_defaults():
    assert Privatize.of(Command("privatize", ("bins",))) == Privatize("bins", 4, True)
    assert Privatize.of(Command("privatize", ("bins", 8, False))) == Privatize("bins", 8, False)


def test_a_command_or_a_schedule_that_is_not_one_is_refused():
    with pytest.raises(StrategyError, match="unknown scheduling command 'tile'"):
        as_schedule([("tile", "i")])
    with pytest.raises(StrategyError, match=r"schedule: 3 is not a command; write \(name, \*args\)"):
        as_schedule([3])
    with pytest.raises(StrategyError, match="expected a Schedule or a list of commands, not dict"):
        as_schedule({"reorder": "i"})
    assert as_schedule(None) == Schedule()
