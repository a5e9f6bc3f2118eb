"""The package's import graph has no cycle: data flows one way through the stages.

And every third-party module the code imports is declared in pyproject.toml, so an install
from it never fails on an import that only worked because something else pulled it in.

Every ``import judgeprobe…`` counts, at module level or inside a function (a lazy import is
still a dependency); a module importing its own package's ``__init__`` counts too. Only the
implicit step from a submodule to its parent package, which Python makes on any import, is
left out.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "judgeprobe"
ROOT = PACKAGE.parent
OWN = {"judgeprobe", "tests", "bench", "servers"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the judgeprobe modules it imports."""
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {known(a.name) for a in node.names if a.name.startswith("judgeprobe")}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("judgeprobe"):
                found |= {known(f"{node.module}.{a.name}") for a in node.names}
        graph[name] = {m for m in found if m and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50
    assert "judgeprobe.run" in graph
    assert cycles(graph) == []


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules(*dirs: Path) -> dict[str, set[str]]:
    """Top-level third-party modules imported anywhere under ``dirs`` → the files importing them."""
    found: dict[str, set[str]] = {}
    for path in (p for d in dirs for p in d.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for top in {n.split(".")[0] for n in names}:
                if top not in sys.stdlib_module_names and top not in OWN | {"__future__"}:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        requirements += extra
    declared = {_normal(re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0]) for r in requirements}
    distributions = packages_distributions()
    used = imported_modules(*(ROOT / d for d in sorted(OWN)))
    assert {"polars", "pytest", "openai"} <= set(used)
    missing = {
        module: sorted(files)
        for module, files in used.items()
        if not {_normal(d) for d in distributions.get(module, [module])} & declared
    }
    assert missing == {}


def test_the_engine_depends_on_no_stage_that_uses_it() -> None:
    """The engine owns its settings: it imports only itself, records and shared helpers.

    A sweep, rubric or candidate config composes the engine's settings, never the reverse.
    """
    shared = {"judgeprobe", "judgeprobe.files", "judgeprobe.records"}
    for module, imported in import_graph().items():
        if module.startswith("judgeprobe.engine"):
            outside = {m for m in imported if not m.startswith("judgeprobe.engine")} - shared
            assert not outside, f"{module} imports {sorted(outside)}"
