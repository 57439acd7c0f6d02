"""The import graph of citeq's own packages, read from the source (ast), not by importing.

Two rules (README "Architecture"): no import cycle between modules, and no import against
the layer order — broker ← analysis ← actors, web ← citeq (the CLI on top). Every import
counts, also those inside functions, since a cycle hidden in a function is still a cycle.
Scripts and tests may import anything and are not read.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("broker", "analysis", "actors", "web", "citeq")

#: What each top-level package may import of citeq's own. web imports actors only to boot
#: its process's broker with the actors declared (web/app.py create_app), so that it can send.
MAY_IMPORT = {
    "broker": {"broker"},
    "analysis": {"broker", "analysis"},
    "actors": {"broker", "analysis", "actors"},
    "web": {"broker", "analysis", "actors", "web"},
    "citeq": set(PACKAGES),
}

#: The layers inside analysis/, lowest first: a module may import its own layer and those
#: below it. The shared modules (settings, errors, inputs, db, messages) are the floor; the
#: per-user queue owns the job lifecycle; the pipeline's subsystems sit on it (documents and
#: providers lowest, the analysis that drives them highest); the read side and the stall
#: sweep across lifecycles are on top.
ANALYSIS_LAYERS: tuple[tuple[str, ...], ...] = (
    ("analysis", "analysis.settings", "analysis.errors", "analysis.inputs", "analysis.db", "analysis.messages"),
    ("analysis.queue",),
    ("analysis.pipeline", "analysis.pipeline.documents", "analysis.pipeline.providers"),
    ("analysis.pipeline.retrieval",),
    ("analysis.pipeline.citations", "analysis.pipeline.judging"),
    ("analysis.pipeline.intake", "analysis.pipeline.analyze"),
    ("analysis.pipeline.sweeps",),
    ("analysis.surface", "analysis.maintenance"),
)


def _analysis_layer(module: str) -> int:
    """The layer of an analysis module: that of the longest prefix named in ANALYSIS_LAYERS."""
    best, found = -1, None
    for level, prefixes in enumerate(ANALYSIS_LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), level
    assert found is not None, module
    return found


#: Cycles known and not yet broken: none. A cycle fails the test.
KNOWN_CYCLES: list[set[str]] = []


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> dict[str, int]:
    """The citeq modules ``name`` imports (anywhere in it), with the line of the first import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    targets: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # ``from analysis.queue import userqueue`` imports the module analysis.queue.userqueue.
            candidates = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.setdefault(candidate, node.lineno)
    return targets


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles() -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in GRAPH:
        if root in index:
            continue
        work = [(root, iter(GRAPH[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(GRAPH[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    return components


def test_the_graph_reads_every_package():
    assert {name.split(".")[0] for name in MODULES} == set(PACKAGES)
    assert "analysis.queue.userqueue" in GRAPH["actors.queue"]


def test_no_import_against_the_layer_order():
    wrong = [f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
             for name, targets in GRAPH.items() for target, line in targets.items()
             if target.split(".")[0] not in MAY_IMPORT[name.split(".")[0]]]
    assert not wrong, "imports against the layer order:\n" + "\n".join(sorted(wrong))


def test_no_import_against_the_layers_inside_analysis():
    wrong = [f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
             for name, targets in GRAPH.items() if name.startswith("analysis")
             for target, line in targets.items()
             if target.startswith("analysis") and _analysis_layer(target) > _analysis_layer(name)]
    assert not wrong, "imports up the layers of analysis/:\n" + "\n".join(sorted(wrong))


def test_no_import_cycle():
    new = [sorted(c) for c in _cycles() if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"import cycles: {new}"


def test_a_cycle_is_found():
    """The check itself: two modules importing each other are reported."""
    GRAPH["fake.a"], GRAPH["fake.b"] = {"fake.b": 1}, {"fake.a": 1}
    try:
        assert {"fake.a", "fake.b"} in _cycles()
    finally:
        del GRAPH["fake.a"], GRAPH["fake.b"]


def test_the_analysis_layers_order_queue_below_pipeline_below_surface():
    assert _analysis_layer("analysis.queue.userqueue") < _analysis_layer("analysis.pipeline.analyze") \
        < _analysis_layer("analysis.surface.report")
    assert _analysis_layer("analysis.pipeline.judging.lexical.cues") == _analysis_layer("analysis.pipeline.judging")


def test_no_package_and_no_test_imports_a_script():
    """scripts/ holds command lines; what the packages and the tests use of them lives in a
    package (citeq/evaluation, citeq/groupsbench), so a script stays a thin command line."""
    wrong = []
    for path in [*(ROOT / "tests").rglob("*.py"), *(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            wrong += [f"{path.relative_to(ROOT)}:{node.lineno} imports {n}" for n in names
                      if n == "scripts" or n.startswith("scripts.")]
    assert not wrong, "\n".join(wrong)
