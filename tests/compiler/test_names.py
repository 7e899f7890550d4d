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
