"""The package is laid in floors, and stays so.

The imports of every module of ``python/cmetrics`` are read from its source (``ast``) into a
graph of modules. The tests fail on a circle in that graph, on an import from a floor to a
higher one (:data:`FLOORS`), on an import written inside a function that is not on the short
allowlist of optional dependencies (:data:`DEFERRED`, each with a comment on its line), on a
one-letter module alias, and on two modules whose names differ by a leading underscore. The
Rust crates get the same circle check over their ``use`` paths. Each checker is first shown to
catch what it looks for, on a small package written for the purpose.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "cmetrics"

#: The floors, from the bottom: a module may import modules of its own floor or of lower ones
#: (a floor is named by module prefixes; the longest matching prefix decides).
FLOORS: list[tuple[str, ...]] = [
    ("cmetrics.exceptions", "cmetrics._kernels", "cmetrics.reference"),
    ("cmetrics._base",),
    ("cmetrics._numpy", "cmetrics._core"),
    ("cmetrics._backend",),
    ("cmetrics._derive",),
    ("cmetrics._results",),
    # The bootstrap's sums and interval arithmetic, which an Evaluator with bootstrap= keeps.
    ("cmetrics.uncertainty.schemes", "cmetrics.uncertainty.intervals"),
    ("cmetrics.streaming", "cmetrics._readers"),
    (
        "cmetrics.confusion",
        "cmetrics.curves",
        "cmetrics.label_ranking",
        "cmetrics.probabilistic",
        "cmetrics.ranking",
        "cmetrics.report",
        "cmetrics.classification",
        "cmetrics.uncertainty",
    ),
    ("cmetrics", "cmetrics.dask"),
    ("cmetrics.cli", "cmetrics.__main__"),
]

#: The numpy backend reads only the floor below it, the errors and the kernel contract.
NUMPY_BACKEND_READS = ("cmetrics._numpy", "cmetrics._base.value_checks", "cmetrics._kernels", "cmetrics.exceptions")

#: Imports that may be written inside a function: optional dependencies imported where they
#: are used (module file -> the top-level packages it may import so). Each such import carries
#: a comment on its line saying why.
DEFERRED: dict[str, frozenset[str]] = {
    "cmetrics/dask.py": frozenset({"dask"}),
    # pyspark (the spark extra) where a Spark function or type is needed: import cmetrics never loads it.
    "cmetrics/spark.py": frozenset({"pyspark"}),
    "cmetrics/cli/benchmark.py": frozenset({"polars", "polars_ds", "scipy", "sklearn"}),
    # pyarrow for a grouped report's columnar summary (GroupedReport.to_arrow).
    "cmetrics/_results/grouped.py": frozenset({"pyarrow"}),
    # pyarrow on the first grouped batch: ``import cmetrics`` does not load Arrow.
    "cmetrics/streaming/group_values.py": frozenset({"pyarrow"}),
    # pyarrow's dataset layer (it loads pandas) only where CSV or JSON Lines files are read.
    "cmetrics/_readers.py": frozenset({"pyarrow"}),
    # scipy's special functions where a beta or binomial tail is computed (0.1 s at import).
    "cmetrics/uncertainty/intervals.py": frozenset({"scipy"}),
    "cmetrics/uncertainty/mcnemar.py": frozenset({"scipy"}),
    # matplotlib (the plot extra) only where a figure is drawn: ``import cmetrics`` never loads it.
    "cmetrics/_results/figures.py": frozenset({"matplotlib"}),
    # scipy's normal quantile for the DET axes, when one is drawn.
    "cmetrics/plot/curve_displays.py": frozenset({"scipy"}),
}

#: Compiled modules of the package (no source to parse).
EXTENSIONS = frozenset({"cmetrics._core"})


# -- the Python import graph ------------------------------------------------------------------


def module_names(package: Path) -> dict[str, Path]:
    """Dotted name -> file of every module under ``package`` (a package is its __init__)."""
    out = {}
    for f in sorted(package.rglob("*.py")):
        parts = list(f.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def imported(module: str, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The package's modules an import statement names (``from a import b`` names the module
    ``a.b`` when there is one, else ``a``); third-party names are returned as they are."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        here = module.split(".")
        is_package = any(k.startswith(module + ".") for k in known)
        parent = here if is_package else here[:-1]
        parent = parent[: len(parent) - node.level + 1]
        base = ".".join([*parent, base] if base else parent)
    names = []
    for a in node.names:
        full = f"{base}.{a.name}"
        names.append(full if full in known else base)
    return names


def in_function(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements written inside a function or method."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    yield sub


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (at any depth of its source)."""
    files = module_names(package)
    known = set(files) | set(EXTENSIONS)
    root = package.name
    graph: dict[str, set[str]] = {m: set() for m in files}
    for m, f in files.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in imported(m, node, known):
                    if (name == root or name.startswith(root + ".")) and name != m:
                        graph[m].add(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def floor_of(module: str, floors: list[tuple[str, ...]]) -> int:
    """The floor of ``module``: that of its longest matching prefix."""
    best, best_len = -1, -1
    for level, prefixes in enumerate(floors):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = level, len(p)
    if best < 0:
        msg = f"{module} is on no floor: add it to FLOORS"
        raise AssertionError(msg)
    return best


def upward(graph: dict[str, set[str]], floors: list[tuple[str, ...]]) -> list[str]:
    """Every import from a floor to a higher one."""
    return [
        f"{m} (floor {floor_of(m, floors)}) imports {t} (floor {floor_of(t, floors)})"
        for m in sorted(graph)
        for t in sorted(graph[m])
        if floor_of(t, floors) > floor_of(m, floors)
    ]


def deferred_imports(package: Path, allowed: dict[str, frozenset[str]]) -> list[str]:
    """Imports inside functions that the allowlist does not hold, or that lack their comment."""
    bad = []
    files = module_names(package)
    for module, f in files.items():
        key = f.relative_to(package.parent).as_posix()
        lines = f.read_text(encoding="utf-8").splitlines()
        for node in in_function(ast.parse("\n".join(lines))):
            names = imported(module, node, set(files))
            tops = {n.split(".")[0] for n in names}
            where = f"{key}:{node.lineno} imports {', '.join(names)} inside a function"
            if not tops <= allowed.get(key, frozenset()):
                bad.append(f"{where} (not on the allowlist)")
            elif "#" not in lines[node.lineno - 1]:
                bad.append(f"{where} without a comment saying why")
    return bad


def one_letter_aliases(package: Path) -> list[str]:
    bad = []
    for f in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bad += [
                    f"{f.relative_to(package.parent)}:{node.lineno}: {a.name} as {a.asname}"
                    for a in node.names
                    if a.asname is not None and len(a.asname) == 1
                ]
    return bad


def underscore_twins(package: Path) -> list[str]:
    """Modules or folders side by side whose names differ by a leading underscore."""
    bad = []
    for folder in [package, *sorted(p for p in package.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        names = {p.stem for p in folder.iterdir() if (p.suffix == ".py" or p.is_dir()) and p.name != "__pycache__"}
        bad += [f"{folder.relative_to(package.parent)}: {n} and _{n}" for n in sorted(names) if f"_{n}" in names]
    return bad


# -- the Rust module graph --------------------------------------------------------------------


def _use_paths(tree: str) -> list[list[str]]:
    """``a::b::{c, d::e as f}`` as the paths it names: [a, b, c], [a, b, d, e]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [[p for p in tree.split("::") if p]]
    head, body = tree[: tree.index("{")], tree[tree.index("{") + 1 : tree.rindex("}")]
    parts, depth, current = [], 0, ""
    for ch in body:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    prefix = [p for p in head.split("::") if p]
    return [prefix + sub for part in parts if part for sub in _use_paths(part)]


def rust_modules(src: Path) -> dict[tuple[str, ...], str]:
    """Module path -> source (comments and the trailing ``#[cfg(test)]`` module dropped)."""
    out = {}
    for f in sorted(src.rglob("*.rs")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts in (["lib"], ["main"]):
            parts = []
        elif parts[-1] == "mod":
            parts = parts[:-1]
        text = re.sub(r"//[^\n]*", "", f.read_text(encoding="utf-8"))
        cut = text.find("#[cfg(test)]\nmod tests")
        out[tuple(parts)] = text if cut < 0 else text[:cut]
    return out


def rust_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the crate's modules it uses: ``use`` items and inline ``crate::``/``super::``
    paths, followed through re-exports (``pub use``) to the module that defines the item;
    ``#[macro_export]`` macros belong to the module that defines them."""
    mods = rust_modules(src)
    macros = {
        name: m for m, text in mods.items() for name in re.findall(r"#\[macro_export\]\s*macro_rules!\s*(\w+)", text)
    }
    defined = {
        m: set(
            re.findall(
                r"^(?:pub(?:\([^)]*\))?\s+)?(?:const\s+fn|fn|struct|enum|trait|const|static|type|macro_rules!)\s*(\w+)",
                text,
                re.M,
            )
        )
        for m, text in mods.items()
    }
    reexports: dict[tuple[str, ...], dict[str, list[str]]] = {
        m: {
            path[-1]: path
            for found in re.findall(r"^pub(?:\([^)]*\))?\s+use\s+([^;]+);", text, re.M)
            for path in _use_paths(found)
        }
        for m, text in mods.items()
    }

    def target(here: tuple[str, ...], path: list[str], depth: int = 0) -> tuple[str, ...] | None:
        if path[0] == "crate":
            node, rest = (), path[1:]
            if rest and rest[0] in macros:
                return macros[rest[0]]
        elif path[0] in ("super", "self"):
            node, rest = here, path
            while rest and rest[0] in ("super", "self"):
                node, rest = (node[:-1] if rest[0] == "super" else node), rest[1:]
        elif (*here, path[0]) in mods:
            node, rest = here, path
        else:
            return None  # another crate
        while rest and (*node, rest[0]) in mods:
            node, rest = (*node, rest[0]), rest[1:]
        if rest and depth < 8 and rest[0] not in defined[node] and rest[0] in reexports[node]:
            further = target(node, reexports[node][rest[0]], depth + 1)
            if further is not None:
                return further
        return node

    graph: dict[str, set[str]] = {"::".join(m) or "crate": set() for m in mods}
    for m, text in mods.items():
        paths = [
            p
            for found in re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", text, re.M)
            for p in _use_paths(found)
        ]
        paths += [p.split("::") for p in re.findall(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", text)]
        for path in paths:
            t = target(m, path)
            if t is not None and t != m:
                graph["::".join(m) or "crate"].add("::".join(t) or "crate")
    return graph


# -- the checkers catch what they look for ----------------------------------------------------


def write_package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "pkg"


def test_the_checkers_find_a_circle_an_upward_import_and_a_hidden_import(tmp_path: Path) -> None:
    pkg = write_package(
        tmp_path,
        {
            "__init__.py": "from pkg import api\n",
            "low.py": "import numpy as np\n",
            "api.py": "from pkg import low\nfrom pkg.mid import helper\n",
            "mid.py": "from . import api\n\ndef helper():\n    from pkg import low\n    import scipy\n",
            "_api.py": "X = 1\n",
            "alias.py": "import numpy as n\n",
        },
    )
    graph = import_graph(pkg)
    assert graph["pkg.mid"] == {"pkg.api", "pkg.low"}
    assert circles(graph) == [["pkg.api", "pkg.mid"]]
    floors = [("pkg.low",), ("pkg.mid", "pkg._api", "pkg.alias"), ("pkg.api", "pkg")]
    assert upward(graph, floors) == ["pkg.mid (floor 1) imports pkg.api (floor 2)"]
    assert deferred_imports(pkg, {"pkg/mid.py": frozenset({"scipy"})}) == [
        "pkg/mid.py:4 imports pkg.low inside a function (not on the allowlist)",
        "pkg/mid.py:5 imports scipy inside a function without a comment saying why",
    ]
    assert one_letter_aliases(pkg) == ["pkg/alias.py:1: numpy as n"]
    assert underscore_twins(pkg) == ["pkg: api and _api"]


def test_the_rust_checker_finds_a_circle_through_a_reexport(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "family").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod family;\npub mod error;\n", encoding="utf-8")
    (src / "error.rs").write_text("#[macro_export]\nmacro_rules! ensure { () => {} }\n", encoding="utf-8")
    (src / "family.rs").write_text(
        "mod walk;\nmod pieces;\npub use walk::Walk;\npub fn shared() {}\n", encoding="utf-8"
    )
    (src / "family" / "walk.rs").write_text(
        "use crate::ensure;\nuse super::pieces::count;\npub struct Walk;\n", encoding="utf-8"
    )
    (src / "family" / "pieces.rs").write_text("use super::Walk;\npub fn count() {}\n", encoding="utf-8")
    graph = rust_graph(src)
    assert graph["family::walk"] == {"error", "family::pieces"}
    assert graph["family::pieces"] == {"family::walk"}  # through the parent's re-export
    assert circles(graph) == [["family::pieces", "family::walk"]]
    (src / "family" / "walk.rs").write_text("use crate::ensure;\npub struct Walk;\n", encoding="utf-8")
    assert circles(rust_graph(src)) == []


# -- the package ------------------------------------------------------------------------------


def test_the_python_package_has_no_import_circle() -> None:
    assert circles(import_graph(PACKAGE)) == []


def test_every_import_runs_downwards() -> None:
    assert upward(import_graph(PACKAGE), FLOORS) == []


def test_the_numpy_backend_reads_only_its_floor_the_errors_and_the_contract() -> None:
    graph = import_graph(PACKAGE)
    reads = {t for m, ts in graph.items() if m.startswith("cmetrics._numpy") for t in ts}
    assert {t for t in reads if not t.startswith(NUMPY_BACKEND_READS)} == set()


def test_no_import_hides_inside_a_function() -> None:
    assert deferred_imports(PACKAGE, DEFERRED) == []


def test_no_one_letter_module_alias_and_no_underscore_twins() -> None:
    assert one_letter_aliases(PACKAGE) == []
    assert underscore_twins(PACKAGE) == []


def test_the_top_level_shows_the_floors_at_a_glance() -> None:
    entries = [p for p in PACKAGE.iterdir() if (p.suffix == ".py" or p.is_dir()) and p.name != "__pycache__"]
    assert len(entries) <= 25, sorted(p.name for p in entries)


@pytest.mark.parametrize("crate", ["rust/core/src", "rust/py/src"])
def test_the_rust_crates_have_no_module_circle(crate: str) -> None:
    graph = rust_graph(ROOT / crate)
    assert len(graph) > 10
    assert circles(graph) == []
