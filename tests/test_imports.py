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
import subprocess
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


# Packages in layers, lowest first: a package may import only packages of lower layers. A
# package's ``__main__`` (its command) belongs to the package and is held to its layer; only the
# console (``judgeprobe/__main__.py``), ``python -m judgeprobe.run``, the public API
# (``judgeprobe/api.py``), the pytest plugin and the CI gate are on top.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(layer.split())
    for layer in (
        "judgeprobe",  # the package root: JudgeprobeError, version, secret scrubbing
        "core",  # records, corpus, files, TOML, CLI helpers
        "text prompts",
        "engine",
        "protocols conditions",
        "runs",  # the shared sweep runner, run directory, configs, manifests
        "metrics",
        "render",  # the page toolkit
        "card",  # the judge card
        "report",  # the report: its composer is handed the card's, selfpref's and rubric's sections
        "candidates rubric annotate selfpref logs calibrate",  # stages
        "compare",  # runs compared on the same items (reads cards, calibrate's labels)
        "cue",  # the cue probe, whose report holds the rubric results and the card
        "review",  # the review server over a cue run (its config, items and conditions)
        "selftest",
        "entry",
    )
)
ENTRY = {"judgeprobe.__main__", "judgeprobe.run", "judgeprobe.api", "judgeprobe.pytest_plugin",
         "judgeprobe.gate"}  # fmt: skip


def package_of(module: str) -> str:
    """The layered package a module belongs to (``entry`` for the console's two modules)."""
    if module in ENTRY:
        return "entry"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a package into one of the same or a higher layer."""
    rank = {package: i for i, layer in enumerate(LAYERS) for package in layer}
    found = []
    for module, imported in sorted(graph.items()):
        here = package_of(module)
        for target in sorted(imported):
            there = package_of(target)
            if here != there and here != "entry" and rank[there] >= rank[here]:
                found.append(f"{module} -> {target} ({here} may not import {there})")
    return found


def test_the_api_is_reached_lazily_from_the_package_root() -> None:
    """``judgeprobe.NAME`` is the API's, looked up by name: the root imports nothing above it.

    The graph above holds every import statement of the root (none reaches ``judgeprobe.api``);
    here, in a fresh interpreter, ``import judgeprobe`` loads no other module of the package,
    and each public name resolves to the API's own object (a subpackage named like a function,
    such as ``judgeprobe.card``, calls it).
    """
    assert import_graph()["judgeprobe"] == set()
    code = (
        "import sys, judgeprobe\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('judgeprobe.'))\n"
        "assert loaded == [], loaded\n"
        "from judgeprobe import api\n"
        "assert set(judgeprobe.API) == set(api.__all__), set(judgeprobe.API) ^ set(api.__all__)\n"
        "for name in api.__all__:\n"
        "    got = getattr(judgeprobe, name)\n"
        "    assert got is getattr(api, name) or isinstance(got, judgeprobe.CommandModule), name\n"
        "import judgeprobe.card.rows, judgeprobe.run\n"
        "assert judgeprobe.card.rows.Card\n"
        "assert callable(judgeprobe.card) and callable(judgeprobe.run)\n"
        "try:\n"
        "    judgeprobe.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('an unknown name resolved')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_every_package_has_a_layer() -> None:
    known = {p for layer in LAYERS for p in layer}
    packages = {package_of(m) for m in import_graph()}
    assert packages - known == set(), "add the new package to LAYERS (and docs/development.md)"
    assert known - packages == set(), "LAYERS names a package that no longer exists"


def test_the_layer_check_finds_a_planted_upward_import() -> None:
    graph = {"judgeprobe.engine.client": {"judgeprobe.cue.stream"}, "judgeprobe.cue.stream": set()}
    assert upward_imports(graph) == [
        "judgeprobe.engine.client -> judgeprobe.cue.stream (engine may not import cue)"
    ]
    sideways = {"judgeprobe.rubric.sweep": {"judgeprobe.annotate.export"}}
    assert upward_imports(sideways) == [
        "judgeprobe.rubric.sweep -> judgeprobe.annotate.export (rubric may not import annotate)"
    ]
    command = {"judgeprobe.report.__main__": {"judgeprobe.cue.outputs"}}
    assert upward_imports(command) == [
        "judgeprobe.report.__main__ -> judgeprobe.cue.outputs (report may not import cue)"
    ]


def test_packages_import_only_lower_layers() -> None:
    """No package imports one above it or beside it, so packages form no cycle."""
    assert upward_imports(import_graph()) == []


def test_packages_form_no_cycle() -> None:
    packages: dict[str, set[str]] = {}
    for module, imported in import_graph().items():
        packages.setdefault(package_of(module), set()).update(map(package_of, imported))
    assert cycles({p: found - {p} for p, found in packages.items()}) == []


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


def test_the_engine_docstring_names_every_engine_module() -> None:
    engine = ROOT / "judgeprobe" / "engine"
    named = set(re.findall(r"``(\w+)``", (engine / "__init__.py").read_text(encoding="utf-8")))
    modules = {p.stem for p in engine.glob("*.py")} - {"__init__"}
    assert len(modules) >= 17
    assert modules - named == set()
