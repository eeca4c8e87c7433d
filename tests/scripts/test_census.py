"""Nothing under ``scripts/`` or ``benchmarks/`` can rot unnoticed: each is run by a test of the default tier (named
there by its path or imported, or imported by a script that is), or listed below with the reason it is not, and mypy
checks both folders."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import ROOT

FOLDERS = ("scripts", "benchmarks")
NOT_RUN_HERE = {
    "scripts/check.sh": ".ci/run's static checks (ruff, mypy)",
    "benchmarks/lsl_speed.py": "branch i39 is changing it",
}
"""Scripts no test here runs, and why. A script leaves this list when a test runs it (the test below says so)."""


def scripts() -> list[str]:
    return sorted(
        p.relative_to(ROOT).as_posix() for f in FOLDERS for p in (ROOT / f).iterdir() if p.suffix in (".py", ".sh")
    )


def imports(script: str, text: str) -> bool:
    """Whether ``text`` imports ``script``'s module (``import x``, ``from benchmarks.x import``)."""
    folder, name = script.split("/")
    return bool(re.search(rf"^\s*(import|from) ({folder}\.)?{Path(name).stem}\b", text, re.M))


def named(script: str, text: str) -> bool:
    """Whether a test's ``text`` runs ``script``: by its path (``scripts/x.py``, ``"scripts" / "x.py"``) or by an
    import of its module."""
    folder, name = script.split("/")
    return script in text or f'"{folder}" / "{name}"' in text or imports(script, text)


def untested() -> set[str]:
    """Scripts no test runs, directly or as a helper module that a script run by a test imports."""
    texts = [p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_*.py") if p.name != "test_census.py"]
    left = {s for s in scripts() if not any(named(s, t) for t in texts)}
    run = [(ROOT / s).read_text(encoding="utf-8") for s in sorted(set(scripts()) - left)]
    while helpers := {s for s in left if any(imports(s, t) for t in run)}:
        left -= helpers
        run = [(ROOT / s).read_text(encoding="utf-8") for s in helpers]
    return left


def test_every_script_is_run_by_a_test_or_listed() -> None:
    left = untested()
    assert sorted(left - set(NOT_RUN_HERE)) == []  # a new script comes with its tiny run
    assert sorted(set(NOT_RUN_HERE) - left) == []  # an entry leaves when its script is run (or deleted)


def test_mypy_checks_the_scripts() -> None:
    files = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]["files"]
    assert set(FOLDERS) <= set(files)
