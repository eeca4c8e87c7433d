"""Shared fixtures and the ``--slow`` and ``--slurm`` switches (tests so marked are skipped unless given)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run tests marked slow")
    parser.addoption("--slurm", action="store_true",
                     help="also run tests marked slurm (a real one-node SLURM: root, apt-get; .ci/run does)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    switches = {"slow": "slow: run with --slow",
                "slurm": "real SLURM (root; installs and starts slurm-wlm, munge, mariadb): run with --slurm"}
    for mark, reason in switches.items():
        if config.getoption(f"--{mark}"):
            continue
        for item in items:
            if item.get_closest_marker(mark) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))


def copy_repo(dest: Path) -> Path:
    """Copy the tracked and untracked-not-ignored files of the repository to ``dest`` (a fresh work tree)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def venv_env() -> dict[str, str]:
    """Environment whose PATH starts with the interpreter's bin dir (python, snakemake, dvc)."""
    import sys

    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env
