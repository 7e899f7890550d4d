"""The scheduling API: each transformation's result against the oracle, and clear refusals."""

import numpy as np
import pytest

from compiler import Tensor, lower
from compiler.backend import build
from compiler.errors import StrategyError
from compiler.format import coo, csc, csf, csr, dcsr, dense
from compiler.lattice import Schedule
from compiler.lattice.schedule import as_schedule
from compiler.testing import check_lowered as check, random_sparse as rand


@pytest.fixture
def mats():
    rng = np.random.default_rng(1)
    A = rand((9, 7), 0.3, rng)
    A[2] = 0
    return (Tensor.from_numpy(A, csr(), name="A"), Tensor.from_numpy(rand((7, 8), 0.3, rng), csr(), name="B"),
            rng.random(7))


def test_reorder_and_precompute_give_spgemm(mats):
    A, B, _ = mats
    s = Schedule().reorder("i", "k", "j").precompute("j", "acc")
    k = check("C[i, j] = A[i, k] * B[k, j]", s, out=csr(), A=A, B=B)
    steps = {st.stage: st for st in k.trace.steps}
    assert "schedule:reorder" in steps and "schedule:precompute" in steps
    assert "acc[j] += A[i, k] * B[k, j]" in str(steps["schedule:precompute"].after)
    assert "precompute" not in steps  # no automatic workspace on top of the scheduled one


def test_precompute_into_dense_output(mats):
    A, B, _ = mats
    k = check("C[i, j] = A[i, k] * B[k, j]", [("reorder", "i", "k", "j"), ("precompute", "j")], A=A, B=B)
    assert "sort" not in k.c_source  # a dense consumer needs no order


def test_parallelize_spmv_and_ttv(mats):
    A, _, x = mats
    if build.openmp_support() is not None:
        pytest.skip("the C compiler has no OpenMP")
    k = check("y[i] = A[i, j] * x[j]", Schedule().parallelize("i"), A=A, x=x)
    assert "#pragma omp parallel for" in k.c_source
    rng = np.random.default_rng(2)
    Bt = Tensor.from_numpy(rand((4, 5, 6), 0.3, rng), csf(), name="B")
    check("A[i, j] = B[i, j, k] * c[k]", [("parallelize", "i")], out=dense(2), B=Bt, c=rng.random(6))


def test_only_parallel_kernels_get_openmp(mats):
    A, _, x = mats
    k = lower("y[i] = A[i, j] * x[j]", A=A, x=x)
    assert "#pragma" not in k.c_source


@pytest.mark.parametrize("prog, formats, schedule, message", [
    ("y[i] = A[i, j] * x[j]", {"A": csc(), "x": dense(1)}, Schedule().parallelize("j"), "same elements of y"),
    # (C[i, j, l] = A[i, j, k] * B[l, k] into a CSF was refused here: test_lattice_csf_threads runs it)
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().parallelize("j"),
     r"j runs inside the loop i and does not index the output y, so its iterations add into the same elements of y"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().reorder("j", "i"), "stored with i before j"),
    # k belongs to the nested sum beside + D (it said only "must list the loops ['i', 'j']")
    ("C[i, j] = A[i, k] * B[k, j] + D[i, j]", {"A": csr(), "B": csr(), "D": csr()}, Schedule().reorder("i", "k", "j"),
     r"order \['i', 'k', 'j'\] must list the loops \['i', 'j'\]: k is a loop of a nested reduction or a workspace, "
     r"run inside the loops i, j; reorder orders the loops around the assignment to the output"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("j"), "not an index of the result"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("i", "A"), "already a tensor"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().fuse("i", "j", "f"),
     r"fuse\(i, j, f\) does not apply: the loop over j iterates A's level 1 \(SparseList\); .*Add pos"),
    ("a[i] = b[i] + c[i]", {"b": "sparse_vector", "c": "sparse_vector"}, Schedule().parallelize("i"),
     r"merges b's level 0 \(SparseList\) and c's level 0 \(SparseList\) in a while loop"),
    # names: a workspace or a new variable must be a fresh C identifier
    ("C[i, j] = A[i, k] * B[k, j]", {"A": csr(), "B": csr()}, Schedule().reorder("i", "k", "j").precompute("j", "k"),
     r"precompute\(j, k\) does not apply: workspace name k is already an index"),
    ("C[i, j] = A[i, k] * B[k, j]", {"A": csr(), "B": csr()},
     Schedule().reorder("i", "k", "j").precompute("j", "double"),
     "workspace name 'double' cannot name an array of the generated C: it is a keyword of C"),
    ("C[i, j] = A[i, k] * B[k, j]", {"A": csr(), "B": csr()}, Schedule().reorder("i", "k", "j").precompute("j", "1w"),
     "workspace name '1w' cannot name an array of the generated C: use ASCII letters"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().split("i", "for", "i1", 2),
     r"split\(i, for, i1, 2, down\) does not apply: 'for' cannot name a variable of the generated C: it is a keyword "
     r"of C"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().pos("j", "do", "A"),
     "'do' cannot name a variable of the generated C: it is a keyword of C"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().reorder(1, 2),
     r"reorder\(1, 2\) needs index names \(strings\)"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().parallelize("q"),
     r"parallelize\(q\) does not apply: q is not a loop of the statement \(loops i, j\)"),
    ("y[i] = A[i] * B[i] + prod[k](C[k])", {"A": dense(1), "B": dense(1), "C": "sparse_vector"},
     Schedule().parallelize("i"), r"the statement first computes the reduction prod\[k\]\(C\[k\]\), outside every "
     r"loop, so no loop encloses all of it"),
    ("s = sum[i](max[j](A[i, j]))", {"A": csc()}, Schedule().parallelize("i"),
     r"the statement first computes the workspace w, which the formats need \(.*\), outside every loop"),
    # (A CSC, B CSR: reading A as CSR would make them agree, but parallelize(j) does not apply then)
    ("y[i] = max[j](A[i, j] * B[i, j]) * C[i, j]", {"A": csc(), "B": csr(), "C": csr()}, Schedule().parallelize("j"),
     r"A\[i, j_2\] is stored in the order j_2, i, .*\(reading A as csr would remove the disagreement, but then: "
     r"parallelize\(j\) does not apply: .*\) \(j_2 is the index j of an inner reduction, renamed apart from the j "
     r"around it\)"),
    ("s = sum[i, j](A[i, j])", {"A": csr()}, Schedule().split("i", "i0", "i1", 2 ** 63),
     r"the factor must be a positive integer below 2\*\*63 \(an int64\), not 9223372036854775808"),
    ("s = sum[i, j](A[i, j])", {"A": csr()}, Schedule().parallelize("j"),
     r"only the outermost loop of the reduction into s can be parallelized, and its loops run i, j"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().reorder("i", "i"),
     r"schedule: order \['i', 'i'\] must list the loops \['i', 'j'\]: i is listed twice"),
    ("y[i] = max[j](A[i, j])", {"A": csr()}, Schedule().precompute("i", "w", "max[j](A[i, j])"),
     r"max\[j\]\(A\[i, j\]\) is the whole right-hand side, and its reduction over j is the output's own update "
     r"\(y\[i\] max= A\[i, j\]\); precompute part of its body, A\[i, j\], or leave the expression out"),
    # names the generated C already uses (they made C that did not compile)
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().split("i", "y_val", "i1", 2),
     r"split\(i, y_val, i1, 2, down\) does not apply: 'y_val' cannot name a variable of the generated C: the "
     r"generated C names y's arrays so \(y<level>_<kind>: y_val, y1_pos, y0_size\)"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().split("i", "SIZE_MAX", "i1", 2),
     r"'SIZE_MAX' cannot name a variable of the generated C: the generated C uses SIZE_MAX \(a name of C's headers "
     r"or of the kernel's runtime\)"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().pos("j", "int64_t", "A"),
     r"pos\(j, int64_t, A\) does not apply: 'int64_t' cannot name a variable of the generated C: the generated C "
     r"uses int64_t"),
    ("C[i, j] = A[i, j] * 2", {"A": csr(), "C": dense(2)}, Schedule().fuse("i", "j", "__f"),
     r"'__f' cannot name a variable of the generated C: C keeps names beginning with __ for itself"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute("j", "A1_pos", "A[i, j] * x[j]"),
     r"workspace name 'A1_pos' cannot name an array of the generated C: the generated C names A's arrays so"),
    ("y[i] = A[i, j] * x[j]", {"A": csr(), "x": dense(1)}, Schedule().precompute(1),
     r"precompute\(1, w\) does not apply: the workspace's index is 1; name it \(a string, e.g. 'j', or a tuple of "
     r"strings\)"),
    # a schedule that applies but leaves a statement the formats cannot take is named in the refusal
    ("y[j] = A[i, j] * x[i]", {"A": csr(), "x": dense(1), "y": coo(1)}, Schedule().precompute("j", "w", "A[i, j]"),
     r"sparse output y is assembled in storage order \(j\) but the loops run i, j; .* \(with the schedule "
     r"precompute\(j, w, A\[i, j\]\)\)"),
    ("y[k, i] = sum[j](B[j] - max[j](A[j, k] + x[i]))", {"A": dcsr(), "B": dense(1), "x": dense(1)},
     Schedule().precompute("k", "w"), r"j_2 must be iterated before k; .* \(j_2 is the index j of an inner reduction, "
     r"renamed apart from the j around it\) \(with the schedule precompute\(k, w\)\)"),
])
def test_inapplicable_schedules_say_why(prog, formats, schedule, message):
    from compiler.format import parse_format
    fm = {k: parse_format(v, ndim=3 if v == "csf" else 1) if isinstance(v, str) else v for k, v in formats.items()}
    with pytest.raises(StrategyError, match=message):
        lower(prog, options={"schedule": schedule}, **fm)


def test_schedule_spellings():
    assert as_schedule([("reorder", "i", "j")]) == Schedule().reorder("i", "j")
    with pytest.raises(StrategyError, match="unknown scheduling command"):
        as_schedule([("unroll", "i", 4)])
    with pytest.raises(StrategyError, match="not a command"):
        as_schedule(["reorder"])


def test_a_second_parallelize_and_a_non_text_precompute_expression_are_refused():
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match=r"schedule: parallelize\(i\) does not apply: parallelize\(i\) came "
                                            r"first; one loop runs on threads"):
        lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(3),
              options={"schedule": Schedule().parallelize("i").parallelize("i")})
    with pytest.raises(StrategyError, match=r"schedule: precompute\(j, w, 5\) does not apply: the expression must be "
                                            r"index notation \(a string\), not int"):
        lower("y[i] = A[i, j] * x[j]", A=A, x=np.ones(3), options={"schedule": Schedule().precompute("j", "w", 5)})


def test_a_second_precompute_over_the_first_ones_workspace_says_so():
    A = Tensor.from_numpy(np.eye(3), csr(), name="A")
    with pytest.raises(StrategyError, match=r"precompute\(j\): precompute applies to loops that directly enclose "
                                            r"one assignment; this statement has the workspace of an earlier "
                                            r"precompute inside its loops"):
        lower("C[i, j] = A[i, k] * B[k, j]", A=A, B=A, C=csr(),
              options={"schedule": Schedule().precompute("j", "w").precompute("j", "v")})
