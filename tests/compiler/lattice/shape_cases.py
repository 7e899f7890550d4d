"""Shape-operator programs, each with a seed and its inputs' shapes, that both the sequence CFIR's
tests (test_seqderive: interpreted) and the lattice's C kernels' (test_seqemit: compiled) check,
each by its own ``check(program, seed=seed, **shapes)`` over :data:`SHAPE_CASES`.

>>> [program for program, _, _ in STACKS][0]
'C[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)'
"""

#: row-major collapses of a matrix into a vector, alone and fused with a product
COLLAPSES = [("c[k] = collapse(A[i, j], (i, j) -> k)", 0, {"A": (3, 4)}),
             ("c[k] = collapse(A[i, j], (i, j) -> k) * b[k]", 1, {"A": (3, 4), "b": (12,)})]
#: a vector split into a matrix's rows
SPLITS = [("C[i, j] = split(b[k], k -> (i, j:4))", 0, {"b": (12,)})]
#: horizontal and vertical stacks (concatenations) of two and three matrices
STACKS = [("C[i, l] = concat((A[i, j], B[i, k]), (j, k) -> l)", 0, {"A": (3, 2), "B": (3, 4)}),
          ("C[l, i] = concat((A[j, i], B[k, i]), (j, k) -> l)", 5, {"A": (2, 3), "B": (4, 3)}),
          ("C[l, i] = concat((A[j, i], B[k, i], E[m, i]), (j, k, m) -> l)", 6, {"A": (2, 3), "B": (1, 3), "E": (2, 3)})]
#: strided slices of rows and of columns, alone and fused with a product
SLICES = [("C[k, i] = slice(A[j, i], j -> k, (1, 8, 3))", 0, {"A": (9, 4)}),
          ("C[i, k] = slice(A[i, j], j -> k, (0, 5, 2))", 7, {"A": (3, 5)}),
          ("C[k, i] = slice(A[j, i], j -> k, (1, 6, 2)) * B[k, i]", 8, {"A": (7, 3), "B": (3, 3)})]
#: every family, in that order
SHAPE_CASES = COLLAPSES + SPLITS + STACKS + SLICES
