"""The ``kg-agent`` supervisor runs the CLI of the package it was started from."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.cli import kg_agent_exe


def test_a_folder_holding_another_copy_of_the_package_is_not_imported(tmp_path: Path) -> None:
    """Run from a folder with another ``kg_agent`` (a checkout of another version), the
    child must not import that copy: it did, through ``python -m``'s first import path."""
    decoy = tmp_path / "kg_agent"
    decoy.mkdir()
    (decoy / "__init__.py").write_text('raise SystemExit("the decoy package ran")\n')
    missing = tmp_path / "missing.kuzu"
    out = subprocess.run(
        [*kg_agent_exe(), "stats", "--db", str(missing)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "decoy" not in out.stderr + out.stdout
    assert out.returncode == 1 and "not found" in out.stderr
