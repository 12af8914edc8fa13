"""Shared fixtures: the repository root and the `tracegate` command line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECONCILE = ROOT / "specs" / "reconcile_before_retry.tg"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli() -> "Cli":
    """The CLI built from this repository: $TRACEGATE_BIN (set by
    scripts/test-python.sh), else built here with cargo."""
    binary = os.environ.get("TRACEGATE_BIN")
    if not binary:
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        binary = str(target / "release" / "tracegate")
    return Cli(binary)


class Cli:
    def __init__(self, binary: str) -> None:
        self.binary = binary

    def check_json(self, specs: list, traces: list, *options: str, cwd: Path = ROOT) -> list[dict]:
        """The rows of `tracegate check SPECS --traces TRACES OPTIONS --output json`."""
        args = [str(s) for s in specs] + ["--traces"] + [str(t) for t in traces]
        done = subprocess.run(
            [self.binary, "check", *args, *options, "--output", "json"],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={"PATH": os.environ.get("PATH", "")},
        )
        assert done.returncode in (0, 1, 2), done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]
