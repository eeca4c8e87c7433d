"""The ``lsnmt`` command (lsnmt/cli.py): declared as a console script, ``python -m lsnmt`` runs it, and each of
``run``, ``status``, ``report`` and ``config show`` does what it says, in a copy of the repository."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.typed import to_dict

from .conftest import ROOT, copy_repo, venv_env


def lsnmt(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsnmt", *args], cwd=cwd, env=venv_env(), capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repo(tmp_path_factory.mktemp("cli"))


def test_the_console_script_is_declared_and_python_m_lsnmt_runs_it(repo: Path) -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"lsnmt": "lsnmt.cli:main"}
    out = lsnmt(repo, "--help")
    assert out.returncode == 0, out.stderr
    for command in ("run", "status", "report", "config"):
        assert f"    {command} " in out.stdout, out.stdout


def test_config_show_prints_every_setting_of_the_experiment(repo: Path) -> None:
    out = lsnmt(repo, "config", "show", "iwslt14")
    assert out.returncode == 0, out.stderr
    shown = yaml.safe_load(out.stdout)
    params = Params.load(ROOT / "params.yaml")
    exp = to_dict(params.get("iwslt14"))
    assert shown["model"] == exp["model"] and shown["train"] == exp["train"]  # defaults included
    assert shown["train"]["label_smoothing"] == 0.1 and shown["jobs"]["methods"] == list(params.methods_of("iwslt14"))
    bad = lsnmt(repo, "config", "show", "nope")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "'nope' is not defined" in bad.stderr, bad.stderr


def test_run_hands_over_to_run_sh(tmp_path: Path) -> None:
    repo = copy_repo(tmp_path / "repo")
    (repo / "run.sh").write_text('#!/usr/bin/env bash\necho "run.sh got: $*"\n', encoding="utf-8")
    out = lsnmt(repo, "run", "--dry", "-S", "x=1")
    assert out.returncode == 0 and out.stdout == "run.sh got: --dry -S x=1\n", out.stdout + out.stderr


def test_report_prints_the_first_screen_or_says_there_is_none(tmp_path: Path) -> None:
    repo = copy_repo(tmp_path / "repo")
    (repo / "reports/README.md").unlink(missing_ok=True)
    none = lsnmt(repo, "report")
    assert none.returncode == 1 and "no report yet" in none.stderr and "lsnmt run" in none.stderr
    text = "# Results\n\nThe answer.\n\n## Headline\n\nLMS > naive.\n\n## Tables\n\nmany\n"
    (repo / "reports/README.md").write_text(text, encoding="utf-8")
    out = lsnmt(repo, "report")
    assert out.returncode == 0 and "LMS > naive." in out.stdout and "many" not in out.stdout, out.stdout
    assert "reports/index.html" in out.stdout
    outside = lsnmt(tmp_path, "report")
    assert outside.returncode != 0 and "not the repository's root" in outside.stderr


@pytest.mark.timeout(600)
def test_status_names_the_experiment_and_what_dvc_would_run(repo: Path) -> None:
    out = lsnmt(repo, "status")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("experiment: default (") and "methods: naive" in lines[0], lines
    assert lines[1].startswith("dvc: ") and "stage(s) to run: download" in lines[1], lines  # nothing ran in a copy
    assert lines[2] == "report: none yet (lsnmt run builds it)", lines
