"""run.sh's DVC console (lsnmt/graph/brief.py): DVC's per-stage lines held back, a stage's own output, DVC's errors
and its other lines kept, a closing count; a real ``dvc`` on a two-stage project."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

from lsnmt.graph.brief import StageChatter

ROOT = Path(__file__).resolve().parent.parent
DVC_YAML = """\
stages:
  one:
    cmd:
    - "true"
    - 'echo one-ran > one.txt; echo "one: start" >&2; echo "one at $LSNMT_STEP, $LSNMT_ETA"'
    outs: [one.txt]
  two:
    cmd: 'cat one.txt > two.txt; echo "two: done"; echo "two at $LSNMT_STEP"'
    deps: [one.txt]
    outs: [two.txt]
"""


def _brief(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "lsnmt.graph.brief", *argv],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )


def test_dvc_repro_prints_the_stages_lines_and_a_count(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")

    first = _brief(tmp_path, "repro")
    assert first.returncode == 0, first.stdout
    lines = first.stdout.splitlines()
    assert "one: start" in lines and "two: done" in lines, lines
    assert not [x for x in lines if x.startswith(("Running stage", "> ", "Updating lock", "Generating lock"))]
    assert "" not in lines, lines
    assert re.fullmatch(r"dvc repro: 2 stage\(s\) run, 0 up to date, in \d+ s", lines[-1]), lines
    assert re.search(r"^one at 1/2, about \d+ (s|min) left$", first.stdout, re.M), lines  # lsnmt.graph.eta
    assert "two at 2/2" in lines, lines
    seconds = json.loads((tmp_path / ".dvc/tmp/lsnmt-stage-seconds.json").read_text())
    assert set(seconds) == {"one", "two"} and all(v >= 0 for v in seconds.values()), seconds
    assert not [x for x in lines if "dvc push" in x or "auto staging" in x], lines  # no remote; autostage is off

    again = _brief(tmp_path, "repro")
    assert again.returncode == 0 and "didn't change" not in again.stdout, again.stdout
    assert re.fullmatch(r"dvc repro: 0 stage\(s\) run, 2 up to date, in \d+ s", again.stdout.splitlines()[-1])

    (tmp_path / "dvc.yaml").write_text(DVC_YAML.replace("cat one.txt > two.txt", "exit 3"), encoding="utf-8")
    failed = _brief(tmp_path, "repro")
    assert failed.returncode != 0
    assert "ERROR: failed to reproduce 'two'" in failed.stdout, failed.stdout
    assert "stage(s) run" not in failed.stdout


def test_in_a_git_repository_the_lock_file_hint_stays_and_the_auto_staging_hint_goes(tmp_path: Path) -> None:
    """DVC's closing hints: ``git add dvc.lock`` (README "After a run") stays; auto staging, which .dvc/config turns
    off on purpose, and ``dvc push`` without a remote go."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "config", "core.autostage", "false"], cwd=tmp_path, check=True)
    (tmp_path / "dvc.yaml").write_text(DVC_YAML, encoding="utf-8")
    out = _brief(tmp_path, "repro")
    assert out.returncode == 0, out.stdout
    assert "git add" in out.stdout and "dvc.lock" in out.stdout, out.stdout
    assert "auto staging" not in out.stdout and "dvc push" not in out.stdout, out.stdout


def test_the_eta_fits_the_prior_to_this_run_and_prefers_what_it_measured() -> None:
    from lsnmt.graph.eta import OVERHEAD, Clock, minutes, prior

    clock = Clock(["prepare", "train@naive", "train@lms", "report"], history={"report": 3.0})
    assert clock.step("train@lms") == "3/4" and prior("train@lms") == prior("train") == 65
    assert clock.left("train@naive") == 2 * (OVERHEAD + 65) + 3.0  # nothing timed yet: the prior as it is
    clock.measured["prepare"] = 20.0  # a small stage: the fixed cost here is 20 s
    clock.measured["train@naive"] = 20.0 + 2 * 65  # a big one: half the prior's speed beyond it
    assert clock.fit() == (20.0, 2.0)
    assert clock.expected("train@lms") == 150.0  # its sibling's seconds
    assert clock.expected("translate@naive") == 20.0 + 2 * prior("translate")
    assert clock.left("train@lms") == 150.0 + 3.0  # the report: its last run's
    assert minutes(600) == "about 10 min left" and minutes(42) == "about 40 s left"


def test_the_filter_keeps_warnings_and_unknown_info() -> None:
    f = StageChatter()

    def rec(level: int, msg: str, *args: object) -> logging.LogRecord:
        return logging.LogRecord("dvc.stage.run", level, __file__, 1, msg, args, None)

    assert not f.filter(rec(logging.INFO, "Running stage '%s':", "train@naive"))
    assert not f.filter(rec(logging.INFO, "%s %s", ">", "python -m stages.train"))
    assert f.filter(rec(logging.INFO, "%s %s", "$", "something else"))
    assert f.filter(rec(logging.WARNING, "'%s' is empty.", "results/x"))
    assert f.filter(rec(logging.INFO, "To track the changes with git, run:"))
    assert not f.filter(rec(logging.INFO, "\nTo enable auto staging, run:\n\n\tdvc config core.autostage true"))
    assert f.summary(["exp", "run", "-S", "x=1"]) == "dvc exp run: 1 stage(s) run, 0 up to date"
    assert StageChatter().summary(["repro"]) is None
