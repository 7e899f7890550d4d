"""The package's shape, checked: dependencies point one way, no import cycles, no private
names imported across modules, and no module much over 900 lines (DESIGN.md, "How we want
the code")."""

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("compiler", "explorer", "widgets")
#: a module may exceed 900 lines by this much before it must be split
LINE_LIMIT = 1000


def _modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            yield ".".join(parts), path


def _imports(name: str, path: Path):
    """(imported module, imported names, top-level?) of each import in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, (), id(node) in top
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield mod, tuple(a.name for a in node.names), id(node) in top


MODULES = dict(_modules())


def test_dependencies_point_one_way():
    """widgets -> explorer -> compiler: the compiler imports neither, the explorer not widgets."""
    bad = []
    for name, path in MODULES.items():
        for mod, _, _ in _imports(name, path):
            head = mod.split(".")[0]
            if name.startswith("compiler") and head in ("explorer", "widgets") or \
                    name.startswith("explorer") and head == "widgets":
                bad.append(f"{name} imports {mod}")
    assert not bad, bad


def test_no_private_name_is_imported_across_modules():
    bad = []
    for name, path in MODULES.items():
        for mod, names, _ in _imports(name, path):
            if mod.split(".")[0] not in PACKAGES or mod == name:
                continue
            bad += [f"{name} imports {n} from {mod}" for n in names
                    if n.startswith("_") and not n.startswith("__")]
    assert not bad, "\n".join(bad)


def test_no_import_cycles_at_module_level():
    """Module-level imports between the packages' modules form no cycle (a function-level
    import, made when called, is how a later stage reaches back: it is allowed)."""
    graph = defaultdict(set)
    for name, path in MODULES.items():
        for mod, names, top in _imports(name, path):
            if not top or mod.split(".")[0] not in PACKAGES:
                continue
            for target in [f"{mod}.{n}" for n in names] + [mod]:
                if target in MODULES and target != name:
                    graph[name].add(target)
                    break
    # a package's __init__ importing its own modules is its surface, not a cycle
    edges = {a: {b for b in bs if not (MODULES[a].name == "__init__.py" and b.startswith(a + "."))
                 and not (MODULES[b].name == "__init__.py" and a.startswith(b + "."))}
             for a, bs in graph.items()}
    cycles, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(edges):
        if n not in state:
            visit(n)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= LINE_LIMIT, f"{MODULES[name].relative_to(ROOT)} has {lines} lines: split it by concept"
