"""parallelize of a scalar result with races='atomics' or 'copies' (TACO's parallelizeAtomicReduction and
parallelizeTemporaryReduction): against the dense oracle, the IR interpreter and a checked build."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import csr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.testing import check_lowered as check, random_sparse as rand


def blocks(races, factor=2):
    return Schedule().pos("i", "ip", "a").split("ip", "i0", "i1", factor).parallelize("i0", races=races)


@pytest.mark.parametrize("races, clause", [("atomics", "#pragma omp atomic"), ("copies", "reduction(+:t_i)")])
def test_a_scalar_dot_product_on_threads(races, clause):
    # before, both were refused: "races=... shares a dense output among the threads, and the result C
    # is a scalar ...; leave races out"
    rng = np.random.default_rng(1)
    a = Tensor.from_numpy(rand((40,), 0.4, rng), sparse_vector(), name="a")
    k = check("C = a[i] * b[i]", blocks(races), checked=True, a=a, b=rng.random(40))
    assert clause in k.c_source
    if races == "atomics":
        assert "reduction(" not in k.c_source   # one accumulator the threads share, each update atomic
    note = k.trace.find("schedule:parallelize")[0].note
    assert ("atomic" if races == "atomics" else "its own copy") in note


def test_atomic_updates_of_a_sum_over_a_matrix():
    rng = np.random.default_rng(2)
    A = Tensor.from_numpy(rand((9, 7), 0.3, rng, dtype=np.int64), csr(0, dtype="int64"), name="A")
    k = check("s = sum[i, j](A[i, j])", Schedule().parallelize("i", races="atomics"), checked=True, A=A)
    lines = k.c_source.splitlines()
    at = [n for n, line in enumerate(lines) if "#pragma omp atomic" in line]
    assert at and all("t_ij +=" in lines[n + 1] for n in at)


@pytest.mark.parametrize("prog, fmt, message", [
    ("s = max[i](a[i])", sparse_vector(), r"with races='atomics' each update of the result s is atomic, which OpenMP "
     r"has for \+, \*, &, \| and \^ of numbers; s is a reduction by max of float64 values"),
    ("s = any[i](a[i])", sparse_vector(False, dtype="bool"), r"s is a reduction by or of bool values \(leave races "
     r"out: each thread then reduces into its own copy\)"),
])
def test_atomics_of_a_reduction_openmp_cannot_update_atomically_say_why(prog, fmt, message):
    with pytest.raises(StrategyError, match=message):
        lower(prog, a=fmt, options={"schedule": Schedule().pos("i", "ip", "a").split("ip", "i0", "i1", 2)
                                    .parallelize("i0", races="atomics")})


@settings(max_examples=7, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(races=st.sampled_from(["atomics", "copies", "none"]), n=st.integers(0, 30), factor=st.integers(1, 7),
       density=st.sampled_from([0.0, 0.3, 1.0]), integer=st.booleans(), seed=st.integers(0, 2 ** 16))
@example(races="atomics", n=0, factor=3, density=0.0, integer=False, seed=0)
@example(races="atomics", n=13, factor=1, density=1.0, integer=True, seed=0)
def test_property_scalar_reductions_on_threads(races, n, factor, density, integer, seed):
    rng = np.random.default_rng(seed)
    dt = np.int64 if integer else np.float64
    a = Tensor.from_numpy(rand((n,), density, rng, dtype=dt), sparse_vector(0, dtype=dt.__name__), name="a")
    b = Tensor.from_numpy(rng.integers(-3, 4, n).astype(dt), dense(1, 0, dt.__name__), name="b")
    check("C = a[i] * b[i]", blocks(races, factor), a=a, b=b)


T3 = rand((6, 5, 7), 0.4, np.random.default_rng(3), empty=(2,))


@pytest.mark.parametrize("races", ["none", "atomics"])
def test_tacos_sptv_parallelizes_an_inner_loop(races):
    # TACO's test_sptvCPU_temp: y[j] = A[i, j, k] * x[k], parallelize(j); each j of a fiber sets its
    # own y[j], and the fibers of i run one after another. Before: "only the outermost loop"
    from compiler.format import csf
    A = Tensor.from_numpy(T3, csf(), name="A")
    k = check("y[j] = A[i, j, k] * x[k]", Schedule().reorder("i", "j", "k").parallelize("j", races=races),
              checked=True, A=A, x=np.random.default_rng(4).random(7))
    src = k.c_source
    assert src.index("for (int64_t pA0") < src.index("#pragma omp parallel for") < src.index("for (int64_t pA1")
    assert ("#pragma omp atomic" in src) == (races == "atomics")


def test_an_inner_loop_that_adds_into_one_element_needs_atomics():
    rng = np.random.default_rng(5)
    B = Tensor.from_numpy(rand((8, 6), 0.5, rng), csr(), name="B")
    k = check("y[i] = B[i, j] * x[j]", Schedule().parallelize("j", races="atomics"), checked=True, B=B,
              x=rng.random(6))
    assert "#pragma omp atomic\n" in k.c_source and "t_j" not in k.c_source   # updates y itself, atomically
    with pytest.raises(StrategyError, match=r"parallelize\(j\) does not apply: j runs inside the loop i and does not "
                       r"index the output y, so its iterations add into the same elements of y \(a race\); "
                       r"parallelize\(j, races='atomics'\) makes each update atomic"):
        lower("y[i] = B[i, j] * x[j]", B=csr(), x=dense(1), options={"schedule": Schedule().parallelize("j")})
    with pytest.raises(StrategyError, match=r"races='copies' gives each thread a copy of y for a loop run once per "
                       r"iteration of the loops around it"):
        lower("y[j] = A[i, j, k] * x[k]", A="csf", x=dense(1),
              options={"schedule": Schedule().parallelize("j", races="copies")})
