"""The lattice strategy's modules, one per stage of its pipeline, keep to the project's layout rules:
each has a docstring, none imports another's private name, and their imports form no cycle (a
deferred import inside a function counts too: it only hides the cycle from import time)."""

import ast
from pathlib import Path

import compiler.lattice

PACKAGE = Path(compiler.lattice.__file__).parent
MODULES = {p.stem: ast.parse(p.read_text()) for p in sorted(PACKAGE.glob("*.py"))}


def _relative_imports(tree):
    """``(imported module, names)`` of each ``from .x import ...`` in the module, nested ones too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [a.name for a in node.names]
            if node.module:
                yield node.module.split(".")[0], names
            else:   # from . import x
                yield from ((n, []) for n in names)


def _cycle(graph):
    """One import cycle of ``graph`` (module -> modules it imports) as a list of modules, or None."""
    done, path = set(), []

    def visit(m):
        if m in path:
            return path[path.index(m):] + [m]
        if m in done:
            return None
        path.append(m)
        for t in sorted(graph.get(m, ())):
            found = visit(t)
            if found:
                return found
        path.pop()
        done.add(m)
        return None

    for m in sorted(graph):
        found = visit(m)
        if found:
            return found
    return None


def test_every_lattice_module_has_a_docstring():
    assert [m for m, tree in MODULES.items() if not ast.get_docstring(tree)] == []


def test_no_lattice_module_imports_a_private_name_of_another():
    private = [f"{m} imports {n} from .{src}" for m, tree in MODULES.items()
               for src, names in _relative_imports(tree) for n in names if n.startswith("_")]
    assert private == []


def test_the_lattice_modules_import_one_another_without_a_cycle():
    graph = {m: {src for src, _ in _relative_imports(tree) if src in MODULES and src != m}
             for m, tree in MODULES.items() if m != "__init__"}
    assert _cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"plan": {"cfir"}, "cfir": {"emitter"}, "emitter": {"plan"}}) == ["cfir", "emitter", "plan", "cfir"]
    assert _cycle({"plan": {"cfir"}, "cfir": set()}) is None
