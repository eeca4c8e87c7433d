"""Nothing under ``scripts/`` or ``benchmarks/`` can rot unnoticed: each is run by a test of the default tier (named
there by its path or imported), or listed below with the reason it is not, and mypy checks both folders."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import ROOT

FOLDERS = ("scripts", "benchmarks")
NOT_RUN_HERE = {
    "scripts/check.sh": ".ci/run's static checks (ruff, mypy)",
    "scripts/gpu_check.sh": "execs scripts/gpu_check.py (tests/test_gpu_check.py); branch i38 runs it (--cpu)",
    "benchmarks/data.py": "repaired on branch i43, with tests/benchmarks/test_data_benchmark.py",
    "benchmarks/lsl_speed.py": "branch i39 is changing it",
}
"""Scripts no test here runs, and why. A script leaves this list when a test runs it (the test below says so)."""


def scripts() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix() for f in FOLDERS for p in (ROOT / f).iterdir() if p.suffix in (".py", ".sh")
    )


def named(script: str, text: str) -> bool:
    """Whether a test's ``text`` runs ``script``: by its path (``scripts/x.py``, ``"scripts" / "x.py"``) or by an
    import of its module (``import x``, ``from benchmarks.x import``)."""
    folder, name = script.split("/")
    stem = Path(name).stem
    imported = rf"^\s*(import|from) ({folder}\.)?{stem}\b"
    return script in text or f'"{folder}" / "{name}"' in text or bool(re.search(imported, text, re.M))


def test_every_script_is_run_by_a_test_or_listed() -> None:
    tests = [p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_census.py"]
    untested = {s for s in scripts() if not any(named(s, t) for t in tests)}
    assert sorted(untested - set(NOT_RUN_HERE)) == []  # a new script comes with its tiny run
    assert sorted(set(NOT_RUN_HERE) - untested) == []  # an entry leaves when its script is run (or deleted)


def test_mypy_checks_the_scripts() -> None:
    files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    assert set(FOLDERS) <= set(files)
