"""No giant grows back: the limits of the package's layout, checked on its source.

Python modules hold at most 700 lines (the two façades of scikit-learn-named functions
excepted), classes at most 450, functions at most 80 apart from their docstrings (``@overload``
stubs are not counted); Rust files, sources and tests, hold at most 700 lines. The checker is
first shown to flag what it looks for.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "cmetrics"

MODULE_LINES = 700
CLASS_LINES = 450
FUNCTION_LINES = 80
RUST_FILE_LINES = 700
#: The public façades of the sklearn-named functions: one documented function after another.
FACADES = frozenset({"classification.py", "probabilistic.py"})


def _is_overload(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        (isinstance(d, ast.Name) and d.id == "overload") or (isinstance(d, ast.Attribute) and d.attr == "overload")
        for d in node.decorator_list
    )


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from ``def`` to the end, the docstring left out."""
    assert node.end_lineno is not None
    lines = node.end_lineno - node.lineno + 1
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        assert first.end_lineno is not None
        lines -= first.end_lineno - first.lineno + 1
    return lines


def oversized_python(package: Path, facades: frozenset[str] = FACADES) -> list[str]:
    found = []
    for f in sorted(package.rglob("*.py")):
        name = f.relative_to(package.parent).as_posix()
        text = f.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MODULE_LINES and f.relative_to(package).as_posix() not in facades:
            found.append(f"{name}: {lines} lines (module limit {MODULE_LINES})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                size = node.end_lineno - node.lineno + 1
                if size > CLASS_LINES:
                    found.append(f"{name}: class {node.name} has {size} lines (limit {CLASS_LINES})")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_overload(node):
                size = _body_lines(node)
                if size > FUNCTION_LINES:
                    found.append(f"{name}:{node.lineno}: {node.name} has {size} lines (limit {FUNCTION_LINES})")
    return found


def oversized_rust(root: Path) -> list[str]:
    return [
        f"{f.relative_to(root).as_posix()}: {n} lines (limit {RUST_FILE_LINES})"
        for f in sorted(root.rglob("*.rs"))
        if "target" not in f.relative_to(root).parts
        and (n := f.read_text(encoding="utf-8").count("\n")) > RUST_FILE_LINES
    ]


def test_the_checker_flags_a_long_module_class_and_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(90))
    (pkg / "long_function.py").write_text(
        f'def f():\n    """Doc.\n\n    More doc.\n    """\n{body}\n', encoding="utf-8"
    )
    methods = "\n".join(f"    def m{i}(self):\n        return {i}\n" for i in range(160))
    (pkg / "long_class.py").write_text(f"class C:\n{methods}", encoding="utf-8")
    (pkg / "classification.py").write_text("x = 1\n" * 800, encoding="utf-8")
    (pkg / "stubs.py").write_text(
        "from typing import overload\n"
        + textwrap.dedent(
            """
            @overload
            def g(x: int) -> int: ...
            @overload
            def g(x: str) -> str: ...
            def g(x):
                return x
            """
        ),
        encoding="utf-8",
    )
    found = oversized_python(pkg, facades=frozenset())
    assert found == [
        "pkg/classification.py: 800 lines (module limit 700)",
        "pkg/long_class.py: class C has 480 lines (limit 450)",
        "pkg/long_function.py:1: f has 91 lines (limit 80)",
    ]
    # A façade may be long; the overload stubs and the docstring do not count.
    assert oversized_python(pkg, facades=frozenset({"classification.py"})) == found[1:]
    (tmp_path / "big.rs").write_text("// x\n" * 701, encoding="utf-8")
    assert oversized_rust(tmp_path) == ["big.rs: 701 lines (limit 700)"]


def test_no_python_module_class_or_function_is_oversized() -> None:
    assert oversized_python(PACKAGE) == []


@pytest.mark.parametrize("crate", ["rust/core", "rust/py"])
def test_no_rust_file_is_oversized(crate: str) -> None:
    assert any((ROOT / crate).rglob("*.rs"))
    assert oversized_rust(ROOT / crate) == []
