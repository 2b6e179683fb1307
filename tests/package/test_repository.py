"""The repository stands alone: no binary artifacts committed, nothing read from outside it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Suffixes of build outputs and data blobs that never belong in the repository.
BINARY_SUFFIXES = (
    ".whl",
    ".so",
    ".pyd",
    ".dll",
    ".dylib",
    ".exe",
    ".o",
    ".a",
    ".zip",
    ".tar",
    ".gz",
    ".bz2",
    ".xz",
    ".zst",
    ".parquet",
    ".npy",
    ".npz",
    ".pkl",
    ".pickle",
    ".feather",
    ".arrow",
)
#: Largest picture of the documentation accepted (docs/*.png, docs/*.jpg).
MAX_IMAGE_BYTES = 160 * 1024
#: Largest text file accepted (the lock file is the largest text file we keep).
MAX_BYTES = 256 * 1024
_SKIP_DIRS = {
    ".git",
    "target",
    ".venv",
    ".ci-venv",
    "__pycache__",
    ".hypothesis",
    ".benchmarks",
    "dist",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
}


def tracked_files() -> list[Path]:
    """The files git tracks, or, outside a git checkout, every file not in a build directory."""
    git = shutil.which("git")
    if git and (ROOT / ".git").exists():
        out = subprocess.run([git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / p for p in out.decode().split("\0") if p]
    return [
        p
        for p in ROOT.rglob("*")
        if p.is_file()
        and not _SKIP_DIRS.intersection(p.relative_to(ROOT).parts)
        and not p.name.endswith((".so", ".pyd"))
    ]


def is_binary(path: Path) -> bool:
    """A committed artifact: a known binary suffix, or NUL bytes in the first 8 KiB."""
    if path.name.lower().endswith(BINARY_SUFFIXES):
        return True
    with path.open("rb") as fh:
        return b"\0" in fh.read(8192)


def test_guard_detects_binaries(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x03\x04")
    blob = tmp_path / "data.bin"
    blob.write_bytes(b"abc\0def")
    text = tmp_path / "notes.md"
    text.write_text("plain text\n")
    assert is_binary(wheel)
    assert is_binary(blob)
    assert not is_binary(text)


def is_doc_image(path: Path) -> bool:
    """A picture the README shows (``docs/*.png`` or ``*.jpg``): documentation, not a build output."""
    rel = path.relative_to(ROOT)
    return rel.parts[:1] == ("docs",) and path.suffix.lower() in (".png", ".jpg")


def test_no_binary_artifacts_committed() -> None:
    files = tracked_files()
    assert len(files) > 20
    binary = [str(p.relative_to(ROOT)) for p in files if p.exists() and is_binary(p) and not is_doc_image(p)]
    assert binary == [], f"binary artifacts are committed: {binary}; remove them (build outputs stay untracked)"
    # The README's pictures: each shown by the README, each small.
    readme = (ROOT / "README.md").read_text()
    for image in (p for p in files if p.exists() and is_doc_image(p)):
        rel = str(image.relative_to(ROOT))
        assert f"({rel})" in readme, f"{rel} is committed but the README does not show it; remove it"
        assert image.stat().st_size <= MAX_IMAGE_BYTES, f"{rel} is above {MAX_IMAGE_BYTES} bytes; shrink it"
    large = [str(p.relative_to(ROOT)) for p in files if p.exists() and p.stat().st_size > MAX_BYTES]
    assert large == [], f"files above {MAX_BYTES} bytes are committed: {large}"


#: What would tie the checkout to a directory beside it or to an environment variable: any
#: path climbing out of the checkout into a sibling folder, or the old spec variable. The
#: folder name is assembled so that this file does not name it literally.
_SIBLING = "sh" + "ared"
_UP = re.escape("." * 2 + "/")
OUTSIDE = re.compile(rf"{_UP}{_SIBLING}|CMETRICS_SPEC_DIR|\b{_SIBLING}/spec\b")


@pytest.mark.parametrize("top", ["tests", "python", "rust", "benches", ".ci", "README.md", "docs"])
def test_nothing_reads_outside_the_checkout(top: str) -> None:
    me = Path(__file__).resolve()
    hits = []
    for p in tracked_files():
        rel = p.relative_to(ROOT)
        if rel.parts[0] != top or p.resolve() == me or not p.exists() or is_binary(p):
            continue
        for i, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                hits.append(f"{rel}:{i}: {line.strip()}")
    assert hits == [], "files refer to paths outside the repository:\n" + "\n".join(hits)


def test_vectors_are_in_the_repository() -> None:
    from tests.conftest import VECTORS

    assert VECTORS.is_relative_to(ROOT)
    names = sorted(p.name for p in VECTORS.glob("*.json"))
    assert len(names) == 7, names
    assert (VECTORS / "README.md").exists()
