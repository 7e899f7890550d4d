"""Loop programs whose writes reach past their reads, shared by the output-extent tests
(tests/compiler/looplets/test_looplets_output_extents.py) and the fast call path's
(tests/compiler/test_fastcall.py): the output's extent is what the writes reach."""

from compiler.looplets import loop_program


@loop_program
def hstack(D, A):
    for i in _:
        for j in _:
            D[i, j] = A[i, j]
    for i in _:
        for j in _:
            D[i, j + 3] = A[i, j]
