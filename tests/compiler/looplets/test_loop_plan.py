"""The loop planner's state: planning again from the start forgets every loop the first plan made."""
from compiler.looplets.loop_plan import LoopPlanner
from compiler.notation.parser import parse


def test_restart_forgets_every_plan_made():
    stmt = parse("y[i] = x[i]")
    planner = LoopPlanner(stmt, {}, stmt.rhs, {}, {"i"})
    planner.one_step_loop()
    planner.depth["t"] = 1
    planner.split_steps["s"] = "t"
    planner.stepped.add("e")
    planner.column_major.add("collapse")  # (the walk of a collapse minor index first, from the first plan)
    planner.reads.append(("walk-reshape", "..."))
    planner.restart(stmt.rhs, {"i"})
    assert (planner.depth, planner.one_step, planner.split_steps, planner.stepped, planner.column_major,
            planner.reads) == ({}, set(), {}, set(), set(), [])
    assert planner.taken == {"i"}
