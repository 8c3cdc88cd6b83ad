"""The packages depend on each other in one direction (docs/architecture.md).

Each package may import only the packages listed for it (imports under
``TYPE_CHECKING`` are types, not dependencies, and are not counted). A new import that
climbs up a layer fails here, naming the module and what it imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "kg_agent"

#: The bottom: what everything may use.
BASE = {"exceptions", "progress", "crashpoints"}
ALLOWED: dict[str, set[str]] = {
    "language": BASE,
    "store": BASE,
    "llm": BASE,
    "cypher_packs": BASE | {"store"},
    "embedding": BASE | {"_plain_model"},
    "entities": BASE | {"store", "language"},
    "ingest": BASE | {"store", "entities", "language", "embedding"},
    "retrieval": BASE | {"store", "entities", "language", "llm", "embedding", "cypher_packs"},
    "multistep": BASE | {"store", "entities", "language", "llm", "retrieval"},
    "answering": BASE | {"language", "retrieval"},
    "synthesis": BASE | {"language", "llm", "retrieval", "answering", "embedding"},
}


def _imports(path: Path) -> set[str]:
    """The kg_agent packages ``path`` imports at run time."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "kg_agent" and len(parts) > 1:
                out.add(parts[1])
    return out


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    root = PACKAGE / package
    files = sorted(root.rglob("*.py")) if root.is_dir() else [PACKAGE / f"{package}.py"]
    assert files, package
    for path in files:
        climbed = _imports(path) - ALLOWED[package] - {package}
        assert not climbed, f"{path.relative_to(PACKAGE)} imports {sorted(climbed)}"


def test_the_query_engine_is_below_its_users() -> None:
    users = {"agent", "serve", "cli", "evaluation"}
    for name in ("pipeline.py", "config.py", "result.py"):
        assert not _imports(PACKAGE / name) & users, name
