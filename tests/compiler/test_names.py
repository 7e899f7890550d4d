import doctest

import compiler.names
from compiler.names import FreshNames


def test_doctest():
    assert doctest.testmod(compiler.names).failed == 0


def test_fresh_names_avoid_taken_and_each_other():
    fresh = FreshNames(["a", "a_2"])
    assert fresh("a") == "a_3"
    assert fresh("a") == "a_4"
    assert fresh("b") == "b"
    assert {"a", "a_2", "a_3", "a_4", "b"} <= fresh.taken


def test_shared_by_the_lattice_and_the_emitter():
    import compiler.backend.c_emitter as ce
    import compiler.lattice.cin as cin
    assert ce.FreshNames is FreshNames and cin.FreshNames is FreshNames


class CountingSet(set):
    """A set that counts the membership tests made of it."""

    tests = 0

    def __contains__(self, name):
        CountingSet.tests += 1
        return super().__contains__(name)


def test_many_names_of_one_base_cost_a_test_each():
    # (issue 30: a kernel of thousands of steps asked for its thousandth `step_stop` by a thousand tests,
    # quadratic in its size; each base now goes on from its last suffix)
    from compiler.looplets.fibers import Namer
    for make in (FreshNames, Namer):
        fresh = make(["step_stop_5"])
        fresh.taken = CountingSet(fresh.taken)
        CountingSet.tests = 0
        names = [fresh("step_stop") for _ in range(2000)]
        assert names[:5] == ["step_stop", "step_stop_2", "step_stop_3", "step_stop_4", "step_stop_6"]
        assert len(set(names)) == 2000 and "step_stop_5" not in names
        assert CountingSet.tests <= 2 * 2000, CountingSet.tests


def test_a_name_taken_later_is_still_avoided():
    fresh = FreshNames()
    assert fresh("t") == "t" and fresh("t") == "t_2"
    fresh.taken |= {"t_3", "t_4"}
    assert fresh("t") == "t_5"
