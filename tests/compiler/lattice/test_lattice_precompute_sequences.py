"""TACO's sequence statement (taco.md §2.8): a workspace only added to, or a sum of terms into a dense
output, becomes a definition then updates of the output (``define; mutate``), each loop nest on
its own (the plan's ``sequence`` step, :func:`compiler.lattice.plan_steps.as_sequence`), against
the oracle; compiled, interpreted and bounds-checked."""

from functools import partial

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import Tensor, lower
from compiler.errors import StrategyError
from compiler.format import csc, csf, csr, dense, sparse_vector
from compiler.lattice import Schedule
from compiler.testing import check_lowered, random_sparse as rand

#: compiled, interpreted and bounds-checked runs, each against the oracle
check = partial(check_lowered, checked=True)

@pytest.mark.parametrize("races", ["atomics", "copies"])
@pytest.mark.parametrize("prog", ["y[i] = A[i, j] * x[j] + z[i]", "y[i] = z[i] + A[i, j] * x[j]"])
def test_a_column_major_product_plus_a_term_runs_its_columns_on_threads(prog, races):
    # taco's sequence: y = z, then the columns add into y, the outer loop, on threads
    rng = np.random.default_rng(23)
    A = Tensor.from_numpy(rand((40, 30), 0.2, rng, empty=(3,)), csc(), name="A")
    z = Tensor.from_numpy(rand(40, 0.3, rng, fill=1.5), sparse_vector(fill=1.5), name="z")
    k = check(prog, Schedule().parallelize("j", races=races), A=A, x=rng.random(30), z=z)
    assert k.trace.find("sequence") and "#pragma omp parallel for" in k.c_source
    assert ("#pragma omp atomic" in k.c_source) == (races == "atomics")


@pytest.mark.parametrize("prog, sequence", [
    ("C[i, k] = A[i, j] * B[j, k] + D[i, k]", True),
    ("C[i, k] = D[i, k] + A[i, j] * B[j, k]", True),
    ("C[i, k] = max(sum[j](A[i, j] * B[j, k]), D[i, k])", False),   # max of a sum: the sum is needed whole
    ("C[i, k] = sum[j](A[i, j] * B[j, k]) * D[i, k]", False)])
def test_a_workspace_only_added_to_becomes_a_sequence(prog, sequence):
    rng = np.random.default_rng(29)
    A = Tensor.from_numpy(rand((9, 8), 0.3, rng, empty=(2,)), csc(), name="A")
    k = check(prog, A=A, B=rng.random((8, 4)), D=rng.random((9, 4)))
    assert bool(k.trace.find("sequence")) == sequence
    assert ("alloc_array(" in k.c_source) != sequence


@pytest.mark.parametrize("prog, fill, define, mutates", [
    ("y[i] = A[i, j] * x[j] + B[i, k] * z[k]", 0.0, "y[i] = 0.0", ["A[i, j] * x[j]", "B[i, k] * z[k]"]),
    ("y[i] = u[i] + A[i, j] * x[j] + B[i, k] * z[k]", 0.0, "y[i] = u[i]", ["A[i, j] * x[j]", "B[i, k] * z[k]"]),
    ("y[i] = A[i, j] * x[j] + sum[k](A[i, k])", 0.0, "y[i] = 0.0", ["A[i, j] * x[j]", "A[i, k]"]),
    ("y[i] = max(max[j](A[i, j]), max[k](B[i, k]))", -np.inf, "y[i] = -inf", ["A[i, j]", "B[i, k]"]),
])
def test_several_workspaces_only_added_together_become_one_sequence(prog, fill, define, mutates):
    # CSC y = A x + B z: each column loop adds into y itself, one after another; no workspace
    rng = np.random.default_rng(61)
    A = Tensor.from_numpy(rand((9, 8), 0.3, rng, empty=(2,), fill=fill), csc(fill=fill), name="A")
    B = Tensor.from_numpy(rand((9, 7), 0.3, rng, fill=fill), csc(fill=fill), name="B")
    k = check(prog, A=A, B=B, x=rng.random(8), z=rng.random(7), u=rng.random(9))
    (step,) = k.trace.find("sequence")
    assert "the workspaces w, w_2 were added to" in step.note
    text = str(step.after)
    assert text.startswith(f"forall i:\n  {define}")
    assert [text.index(f"+= {m}" if fill == 0 else f"max= {m}") for m in mutates] == sorted(
        text.index(f"+= {m}" if fill == 0 else f"max= {m}") for m in mutates)   # the terms as written
    assert "alloc_array(" not in k.c_source


def test_workspaces_of_two_operators_stay():
    # y = max(max A, sum B): y max= A's entries, then y += B's would not be max(max A, sum B)
    rng = np.random.default_rng(71)
    A, B = (Tensor.from_numpy(rand((6, 5), 0.4, rng), csc(), name=n) for n in "AB")
    k = check("y[i] = max(max[j](A[i, j]), sum[k](B[i, k]))", A=A, B=B)
    assert not k.trace.find("sequence") and "alloc_array(" in k.c_source


def test_several_workspaces_stay_under_parallelize():
    # (a race strategy for one nest would reach into the other nests' updates: refused as before)
    rng = np.random.default_rng(67)
    A = Tensor.from_numpy(rand((9, 8), 0.3, rng), csc(), name="A")
    B = Tensor.from_numpy(rand((9, 7), 0.3, rng), csc(), name="B")
    with pytest.raises(StrategyError, match=r"parallelize\(j\) does not apply: the statement first computes the "
                       r"workspace w"):
        lower("y[i] = A[i, j] * x[j] + B[i, k] * z[k]", A=A, B=B, x=dense(1), z=dense(1),
              options={"schedule": Schedule().parallelize("j", races="copies")})


@pytest.mark.parametrize("prog, fill, out, sequence", [
    ("a[i] = x[i] + y[i] + z[i]", 0.0, None, True),
    ("a[i] = x[i] * y[i] + z[i] + w[i]", 0.0, None, True),              # a product is one term
    ("a[i] = max(max(x[i], y[i]), max(z[i], w[i]))", -np.inf, None, True),
    ("a[i] = max(max(x[i], y[i]), z[i])", 0.0, None, False),           # fill 0 is not max's identity
    ("a[i] = x[i] + y[i]", 0.0, None, False),                          # two terms merge in one loop
    ("a[i] = x[i] + y[i] + z[i]", 1.0, None, False),                   # absent entries would add 1
    ("a[i] = x[i] + y[i] + z[i]", 0.0, sparse_vector(), False),        # a sparse output is appended
    ("a[i] = x[i] - y[i] + z[i]", 0.0, None, False),                   # - is not associative
])
def test_a_sum_of_three_terms_or_more_into_a_dense_output_is_a_sequence(prog, fill, out, sequence):
    rng = np.random.default_rng(31)
    vecs = {n: Tensor.from_numpy(rand(12, 0.4, rng, fill=fill), sparse_vector(fill=fill), name=n) for n in "xyzw"}
    used = {n: v for n, v in vecs.items() if f"{n}[" in prog}
    k = check(prog, out=out, **used)
    steps = k.trace.find("sequence")
    assert bool(steps) == sequence
    if sequence:
        n = len(used) if "*" not in prog else 3
        assert f"the {n} terms of the sum go into a one after another" in steps[0].note
        if "*" not in prog:   # one loop per tensor, no merge (x * y is one intersection)
            assert k.c_source.count("for (int64_t p") == len(used) and "while" not in k.c_source


@pytest.mark.parametrize("races", [None, "atomics", "copies"])
def test_a_sum_of_three_terms_parallelized_runs_each_nest_on_the_threads(races):
    # each thread owns its rows of A in every nest (so a race strategy has nothing to do): each
    # term's loop over i is a parallel loop
    rng = np.random.default_rng(41)
    ts = {n: Tensor.from_numpy(rand((30, 20), 0.3, rng, empty=(4,)), csr(), name=n) for n in "BCD"}
    schedule = Schedule().parallelize("i", races=races) if races else Schedule().parallelize("i")
    k = check("A[i, j] = B[i, j] + C[i, j] + D[i, j]", schedule, **ts)
    (step,) = k.trace.find("sequence")
    assert "each runs its loop over i on the threads" in step.note
    assert k.c_source.count("#pragma omp parallel for") == 3 and "while" not in k.c_source
    assert "atomic" not in k.c_source and "copy" not in k.c_source


def test_a_sum_of_three_terms_whose_threads_share_rows_stays_one_merged_loop():
    # (threads that may write one element would race in each nest: the merged loop runs on them once)
    rng = np.random.default_rng(43)
    ts = {n: Tensor.from_numpy(rand((12, 10), 0.3, rng), csc(), name=n) for n in "BCD"}
    k = check("A[i, j] = B[i, j] + C[i, j] + D[i, j]", Schedule().parallelize("j", races="atomics"), **ts)
    assert not k.trace.find("sequence") and "#pragma omp parallel for" in k.c_source


@pytest.mark.parametrize("dense_names, nests", [("BCD", None), ("B", None), ("BC", 4), ("D", 5)])
def test_dense_terms_of_a_sum_do_not_count_and_lead_in_one_nest(dense_names, nests):
    # a dense term visits every point: it adds no case to the merge, only a pass over the output
    # (one between sparse terms gets its own nest: added to a neighbour, it would round differently)
    rng = np.random.default_rng(47)
    ts = {n: Tensor.from_numpy(rand((12, 10), 0.3, rng, empty=(2,)), dense(2) if n in dense_names else csr(), name=n)
          for n in "BCDEF"}
    names = "BCDEF" if nests else "BCD"
    k = check("A[i, j] = " + " + ".join(f"{n}[i, j]" for n in names), **{n: ts[n] for n in names})
    steps = k.trace.find("sequence")
    assert bool(steps) == bool(nests)
    if nests:
        assert k.c_source.count("for (int64_t i = 0;") == nests
        assert ("the first 2, dense, together" in steps[0].note) == (dense_names == "BC")
        assert f"up to {2 ** (5 - len(dense_names)) - 1} cases at each level" in steps[0].note


@pytest.mark.parametrize("dtype, sequence", [("float64", False), ("int64", True)])
def test_a_float_sum_splits_only_along_its_left_spine(dtype, sequence):
    # x + (y + z) rounds y + z first: one after another would round x + y first. Integers regroup exactly
    rng = np.random.default_rng(53)
    vecs = {n: Tensor.from_numpy(rand(15, 0.4, rng).astype(dtype) * 3, sparse_vector(dtype=dtype), name=n)
            for n in "xyz"}
    k = check("a[i] = x[i] + (y[i] + z[i])", **vecs)
    assert bool(k.trace.find("sequence")) == sequence


@pytest.mark.parametrize("prog, dtype, fill, sequence", [
    ("y[i] += x[i] + u[i] + z[i]", "int64", 0, True),                     # integers regroup exactly
    ("y[i] += x[i] + u[i] + z[i]", "float64", 0, False),                  # y + (x + u + z) rounds once
    ("y[i] max= max(max(x[i], u[i]), z[i])", "float64", -np.inf, True),   # max picks: regroups exactly
    ("y[i] max= x[i] + u[i] + z[i]", "int64", 0, False),                  # the update is not the sum's operator
    ("y[i] min= min(min(x[i], u[i]), min(z[i], w[i]))", "int32", np.iinfo("int32").max, True),
])
@pytest.mark.parametrize("given", [True, False], ids=["given-y", "fresh-y"])
def test_an_update_by_the_sums_operator_becomes_updates_where_it_regroups_exactly(prog, dtype, fill, sequence, given):
    rng = np.random.default_rng(59)
    vecs = {n: Tensor.from_numpy(np.where(rng.random(14) < 0.4, rng.integers(-5, 6, 14), fill).astype(dtype),
                                 sparse_vector(fill=fill, dtype=dtype), name=n) for n in "xuzw" if f"{n}[" in prog}
    if given:
        vecs["y"] = Tensor.from_numpy(rng.integers(-5, 6, 14).astype(dtype), dense(1, dtype=dtype), name="y")
    k = check(prog, **vecs)
    steps = k.trace.find("sequence")
    assert bool(steps) == sequence
    if sequence:
        assert f"(each an update, {prog.split()[1]})" in steps[0].note and "while" not in k.c_source


def test_a_sequence_adds_negative_zero_to_the_fill_as_the_oracle_does():
    # x absent at 0: y = x leaves the fill 0.0, and y += D adds -0.0: 0.0 + -0.0 is 0.0, as in the
    # oracle (the merged kernel, which leaves absent terms out, keeps -0.0; fuzz round 6)
    ts = dict(x=Tensor.from_numpy(np.array([0.0, 1.0]), sparse_vector(), name="x"),
              D=Tensor.from_numpy(np.array([-0.0, 1.0]), dense(1), name="D"),
              u=Tensor.from_numpy(np.array([0.0, 0.0]), sparse_vector(), name="u"),
              z=Tensor.from_numpy(np.array([0.0, 2.0]), sparse_vector(), name="z"))
    from compiler.reference import evaluate
    prog = "a[i] = x[i] + D[i] + u[i] + z[i]"
    k = check(prog, **ts)
    assert k.trace.find("sequence")
    got, want = k(**ts).to_numpy(), evaluate(prog, **ts)[0]
    assert got.tolist() == [0.0, 4.0] and np.array_equal(np.signbit(got), np.signbit(want))


def test_a_sum_of_mixed_dtypes_merges_as_written():
    # float32 x + float32 y rounds in float32 before z (float64) is added: one merged loop
    x, y = (Tensor.from_numpy(np.array([0.1, 0, 0.3], "float32"), sparse_vector(dtype="float32"), name=n) for n in "xy")
    z = Tensor.from_numpy(np.array([1e-9, 0, 0]), sparse_vector(), name="z")
    k = check("a[i] = x[i] + y[i] + z[i]", x=x, y=y, z=z)
    assert not k.trace.find("sequence")


def test_four_3d_csf_tensors_added_make_a_short_kernel():
    # merged, 15 cases at each of three levels made 384 KB of C (90 s for gcc -O3)
    rng = np.random.default_rng(37)
    ts = {n: Tensor.from_numpy(rand((5, 6, 4), 0.3, rng, empty=(1,)), csf(3), name=n) for n in "BCDE"}
    k = check("A[i, j, k] = B[i, j, k] + C[i, j, k] + D[i, j, k] + E[i, j, k]", **ts)
    assert k.trace.find("sequence") and len(k.c_source) < 20_000


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 5), st.sampled_from(["add", "max", "min", "mul"]), st.integers(0, 6),
       st.sampled_from([0.0, 0.3, 1.0]), st.booleans(), st.integers(0, 2**31))
def test_sums_into_dense_outputs_match_the_oracle_as_sequences(nterms, op, n, density, parallel, seed):
    rng = np.random.default_rng(seed)
    ident = {"add": 0.0, "max": -np.inf, "min": np.inf, "mul": 1.0}[op]
    names = "bcdef"[:nterms]
    vecs = {m: Tensor.from_numpy(np.where(rng.random(n) < density, rng.integers(-3, 4, n).astype(float), ident),
                                 sparse_vector(fill=ident), name=m) for m in names}
    expr = f"{names[0]}[i]"
    for m in names[1:]:
        expr = {"add": f"{expr} + {m}[i]", "mul": f"{expr} * {m}[i]"}.get(op, f"{op}({expr}, {m}[i])")
    k = check(f"a[i] = {expr}", Schedule().parallelize("i") if parallel else None, **vecs)
    assert k.trace.find("sequence")   # (every term's fill is the operator's identity)
    assert k.c_source.count("#pragma omp parallel for") == (nterms if parallel else 0)
