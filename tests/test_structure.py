"""The package's shape, checked: dependencies point one way, no import cycles, no private
names imported across modules, and no module much over 900 lines (DESIGN.md, "How we want
the code")."""

import ast
import functools
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


@functools.lru_cache(maxsize=None)
def _imports(name: str, path: Path) -> tuple:
    """(imported module, imported names, top-level?) of each import in the module (found once for
    all the checks: each walked the module's whole tree again)."""
    return tuple(_found_imports(name, path))


def _found_imports(name: str, path: Path):
    tree = _parsed(path.read_text(encoding="utf-8"))
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

#: a module's source parsed once for all the checks here (the trees are only read)
_parsed = functools.lru_cache(maxsize=None)(ast.parse)


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


def _defining_module(mod: str, name: str) -> str | None:
    """The module ``from mod import name`` reaches: ``mod.name`` when that is a module, else the
    module of ``mod``'s package that ``mod``'s ``__init__`` takes ``name`` from, else ``mod``."""
    if f"{mod}.{name}" in MODULES:
        return f"{mod}.{name}"
    if mod in MODULES and MODULES[mod].name == "__init__.py":
        for source, names, _ in _imports(mod, MODULES[mod]):
            if name in names and source in MODULES and source.startswith(mod + "."):
                return source
    return mod if mod in MODULES else None


def _in_package(module: str, package: str) -> bool:
    return MODULES[package].name == "__init__.py" and module.startswith(package + ".")


def import_cycles() -> list:
    """The groups of modules whose imports (function-level ones too) reach each other, each as its
    sorted module names (strongly connected components); a package's ``__init__`` and its own
    modules do not count, and a name imported from a package counts as the module defining it."""
    edges = defaultdict(set)
    for name, path in MODULES.items():
        for mod, names, _ in _imports(name, path):
            if mod.split(".")[0] not in PACKAGES:
                continue
            for target in {_defining_module(mod, n) for n in names} - {None} or {mod} & set(MODULES):
                if target != name and not _in_package(name, target) and not _in_package(target, name):
                    edges[name].add(target)
    index, low, stack, groups = {}, {}, [], []

    def visit(v):   # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return sorted(groups)


def test_no_import_cycles_at_function_level_either():
    """A function-level import may reach back to a later stage, but not into a cycle: the oracle's
    fill of an expression (compiler.reference_fill) and the looplets' index modifiers
    (compiler.looplets.modifiers) were moved out of two; the nodes' printer and a loop program's
    compiler are installed by the later module (``install_printer``, ``install_compiler``) instead
    of imported back. A new cycle fails here, naming its modules."""
    assert import_cycles() == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_size(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= LINE_LIMIT, f"{MODULES[name].relative_to(ROOT)} has {lines} lines: split it by concept"


def _level_names() -> set:
    """The Finch names of the level formats (and their registered aliases)."""
    import compiler.levels as levels
    from compiler.levels.level import Level
    names = {cls.name for cls in vars(levels).values() if isinstance(cls, type) and issubclass(cls, Level)}
    return names - {"Level"}


def _name_literals(node, names: set) -> list:
    """The level names a comparison's operand spells as string literals (alone or in a tuple,
    list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _name_literals(e, names)]
    return []


def level_name_tests(source: str, names: set) -> list:
    """``(line, name)`` of each comparison (``==``, ``!=``, ``in``, ``not in``) against a level's name
    spelled as a literal: a strategy must ask a level what it can do (DESIGN.md).

    >>> level_name_tests('if lvl.name == "SparseList": pass', {"SparseList"})
    [(1, 'SparseList')]
    >>> level_name_tests('ok = kind in ("dense", "sparse")', {"SparseList"})
    []
    """
    out = []
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                out += [(node.lineno, v) for v in _name_literals(operand, names)]
    return out


def test_level_name_tests_are_found():
    names = {"Dense", "SparseList", "SparseCOO"}
    found = level_name_tests('a = n != "Dense"\nb = names not in (["Dense", "SparseList"], ["SparseCOO"])\n'
                             'c = lvl.level_name in {"SparseList"}\nd = x == "Densely"', names)
    assert found == [(1, "Dense"), (2, "Dense"), (2, "SparseList"), (2, "SparseCOO"), (3, "SparseList")]


def test_no_module_outside_the_levels_compares_a_level_name_to_a_literal():
    """Strategies (and every other module) ask a level what it can do; only ``compiler/levels``
    may spell a level's name in a test, so a subclass or a new format is read as what it declares."""
    names = _level_names()
    assert {"Dense", "SparseList", "SparseCOO", "RunList", "Pattern"} <= names
    bad = [f"{MODULES[m].relative_to(ROOT)}:{line} compares with {n!r}"
           for m in sorted(MODULES) if not m.startswith("compiler.levels")
           for line, n in level_name_tests(MODULES[m].read_text(encoding="utf-8"), names)]
    assert not bad, "\n".join(bad)


def _format_class_names() -> set:
    """The class names of the level formats (not the leaves Element and Pattern, nor the bases)."""
    import compiler.levels as levels
    from compiler.levels.level import Level
    return {name for name, cls in vars(levels).items()
            if isinstance(cls, type) and issubclass(cls, Level) and not cls.is_leaf} - {"Level", "IndexedLevel"}


def _class_names(node) -> list:
    """The class names an ``isinstance`` argument or an ``is`` operand spells (``Dense``,
    ``levels.Dense``, or a tuple of them)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for e in node.elts for n in _class_names(e)]
    return []


def class_constants(source: str) -> dict:
    """``{name: [class name, ...]}`` of the module-level names ``source`` binds to a tuple, list or
    set of names (``OWNERS = (SparseList, SparseCOO)``): a test against one is a test of each class.

    >>> class_constants('OWNERS = (SparseList, SparseCOO)\\nN = 3')
    {'OWNERS': ['SparseList', 'SparseCOO']}
    """
    return {t.id: _class_names(node.value) for node in _parsed(source).body
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, (ast.Tuple, ast.List, ast.Set))
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}


def format_class_switches(source: str, classes: set, constants: dict | None = None) -> list:
    """``(line, class)`` of each test of a level's format class: ``isinstance(x, C)``,
    ``issubclass(t, C)`` or ``type(x) is C`` for a format class ``C`` (a leaf's kind may be tested).

    >>> format_class_switches('if isinstance(lvl, (Dense, levels.SparseList)): pass', {"Dense", "SparseList"})
    [(1, 'Dense'), (1, 'SparseList')]
    >>> format_class_switches('ok = isinstance(leaf, Element) and type(lvl) is not Dense', {"Dense"})
    [(1, 'Dense')]

    A constant tuple of format classes (:func:`class_constants`, the module's own or ``constants``
    from the modules it may import) tested by name counts too, each class at the test:

    >>> format_class_switches('OWNERS = (Dense, Element)\\nok = isinstance(lvl, OWNERS)', {"Dense"})
    [(2, 'Dense')]
    """
    tree = _parsed(source)
    spelled = {**(constants or {}), **class_constants(source)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            named = [m for n in _class_names(node.args[1]) for m in spelled.get(n, [n])]
            out += [(node.lineno, n) for n in named if n in classes]
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
                                                   for op in node.ops):
            out += [(node.lineno, n) for operand in [node.left, *node.comparators]
                    if not isinstance(operand, ast.Call) for n in _class_names(operand) if n in classes]
    return out


def test_no_module_outside_the_levels_switches_on_a_level_format_class():
    """Strategies and every other module (the runtime, the tensors, the array language, the explorer,
    the widgets) ask a level what it can do: the looplet strategy reads a level through its unfurl and
    writes it through its writer, both found through the class's bases, the lattice strategy through
    its properties, and the runtime allocates an output's arrays by the level's own rule
    (``allocated_arrays``). Only ``compiler/levels`` tests a level's format class, so a subclass or a
    new format registered with an unfurl and a writer is lowered as what it declares (issue 29)."""
    classes = _format_class_names()
    assert {"Dense", "SparseList", "SparseByteMap", "SparseHash", "RunList"} <= classes
    # (a tuple of classes another module binds and this one imports: ``isinstance(lvl, ASSEMBLED)``)
    constants = {}
    for m in sorted(MODULES):
        for name, spelled in class_constants(MODULES[m].read_text(encoding="utf-8")).items():
            constants[name] = constants.get(name, []) + spelled
    bad = [f"{MODULES[m].relative_to(ROOT)}:{line} tests the class {n}"
           for m in sorted(MODULES) if not m.startswith("compiler.levels")
           for line, n in format_class_switches(MODULES[m].read_text(encoding="utf-8"), classes, constants)]
    assert not bad, "\n".join(bad)


def _level_array_names() -> set:
    """The names the built-in level formats give their arrays (``pos``, ``idx``, ``tbl``, ...)."""
    from compiler.levels.level import level_classes
    return {n for cls in level_classes()
            for n in (*getattr(cls, "index_arrays", ()), *getattr(cls, "fixed_arrays", {}))}


#: the calls that name a level's array for a kernel: the binding's convention and what wraps it (a
#: looplet tensor's ``info.array(k, kind)``, a lattice iterator's ``it.param(kind)``)
_ARRAY_NAMING = ("array_name", "array", "param")


def spelled_array_names(source: str, names: set) -> list:
    """``(line, name)`` of each call naming a level's array (:data:`_ARRAY_NAMING`) by a literal
    among ``names`` instead of asking the level (``lvl.starts_array``, ``it.crd``, ...).

    >>> spelled_array_names('a = info.array(k, "pos")\\nb = array_name(t, k, lvl.starts_array)', {"pos"})
    [(1, 'pos')]
    >>> spelled_array_names('n = array_name(t, m, "size")\\nq = it.param("idx")', {"pos", "idx"})
    [(2, 'idx')]
    """
    out = []
    for node in ast.walk(_parsed(source)):
        if isinstance(node, ast.Call):
            func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if func in _ARRAY_NAMING:
                out += [(node.lineno, a.value) for a in node.args
                        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value in names]
    return out


def test_no_module_outside_the_levels_spells_a_level_arrays_name():
    """The strategies ask a level for its arrays' names (``starts_array``, ``crd_array``,
    ``run_end_array``, ...), so a format that names them otherwise is read by the built-in paths
    (tests/compiler/levels/test_level_array_names.py). Only the levels and the binding spell them."""
    names = _level_array_names()
    assert {"pos", "idx", "ofs", "right", "tbl", "srt"} <= names
    bad = [f"{MODULES[m].relative_to(ROOT)}:{line} names the array {n!r}"
           for m in sorted(MODULES) if not m.startswith("compiler.levels") and m != "compiler.binding"
           for line, n in spelled_array_names(MODULES[m].read_text(encoding="utf-8"), names)]
    assert not bad, "\n".join(bad)


def subscripts_by_array_name(source: str, names: set) -> list:
    """``(line, name)`` of each subscript by a literal among ``names`` (``info["pos"]``): a strategy
    that keys what it knows of a level by a built-in array's name carries that level's storage
    vocabulary, and a format that names its arrays otherwise falls through it.

    >>> subscripts_by_array_name('a = info["pos"]\\nb = info.starts\\nc = d["starts"]', {"pos", "idx"})
    [(1, 'pos')]
    """
    return [(node.lineno, node.slice.value) for node in ast.walk(_parsed(source))
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str) and node.slice.value in names]


def test_no_module_outside_the_levels_keys_by_a_level_arrays_name():
    """What a strategy knows of a level is named by role (``OutputLevel.starts``, ``.appended``;
    a looplet hash's ``keys``), never keyed by a built-in array's name (issue 29, item 1): only the
    levels and the binding spell them."""
    names = _level_array_names()
    bad = [f"{MODULES[m].relative_to(ROOT)}:{line} keys by the array name {n!r}"
           for m in sorted(MODULES) if not m.startswith("compiler.levels") and m != "compiler.binding"
           for line, n in subscripts_by_array_name(MODULES[m].read_text(encoding="utf-8"), names)]
    assert not bad, "\n".join(bad)


def test_test_files_have_unique_basenames():
    # (the test folders are no packages: pytest imports each file by its basename, and a second file
    # of the same name fails to collect in a whole run, never when either runs alone)
    seen = defaultdict(list)
    for path in (ROOT / "tests").rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(ROOT)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
