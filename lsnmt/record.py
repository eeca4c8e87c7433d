"""What ran: the versions and the machine behind a stage's output, written beside it as ``run.json``.

Every training (``train``, ``search``, ``task_train``, x-elm's language models, ``claim``) and every evaluation
(``evaluate``, ``task_eval``, ``lm_eval``, ``lm_icl``) writes one into its output, so a result says where it came
from: Python, torch, the CUDA torch was built with and the GPUs it saw, the project's git commit and whether the
checkout's tracked files had uncommitted changes ("dirty"; ``dvc.lock`` and ``reports/params.csv``, which a run
rewrites, do not count), the machine (host, processor, cores, operating system) and the device the project's
device choice takes there
(:func:`lsnmt.train.dist.pick_device`: CUDA when available). ``evaluate`` also copies its trainings' records, so
that the report reads the run's machine from its one input (``results/{exp}/evaluate/run.json``), never from the
machine that builds the report.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lsnmt.io import write_json

NAME = "run.json"
"""The record's file name in a stage's output folder."""
ROOT = Path(__file__).resolve().parents[1]
"""The project's checkout (its git commit is recorded)."""
NOT_COUNTED = ("dvc.lock", "reports/params.csv")
"""Tracked files that a run rewrites, whose changes do not make the checkout dirty: DVC's lock file and the
``params`` stage's table. Untracked files do not count either (a run's reports and ``dvclive/`` are untracked)."""


def processor() -> str:
    """The processor model (``/proc/cpuinfo``; ``platform.processor()`` elsewhere), or ``unknown processor``."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown processor"


def git_state(root: Path = ROOT) -> dict[str, Any]:
    """``{"commit": sha or None, "dirty": bool or None}``: ``None`` outside a git checkout (an installed copy)."""

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", *(f":(exclude){p}" for p in NOT_COUNTED))
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


def torch_state() -> dict[str, Any]:
    """torch's version, the CUDA it was built with (``None``: a CPU build), the GPUs it sees, the device taken."""
    import torch  # here: the record of a torch-free stage needs no torch import at module load

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpus": [torch.cuda.get_device_name(i) for i in range(n)],
        "device": "cuda" if n else "cpu",
    }


def current(root: Path = ROOT) -> dict[str, Any]:
    """The record of this process (module docstring)."""
    machine = {
        "host": socket.gethostname(),
        "processor": processor(),
        "cores": os.cpu_count(),
        "system": f"{platform.system()} {platform.release()}",
    }
    return {
        "python": platform.python_version(),
        **torch_state(),
        **git_state(root),
        "machine": machine,
        "argv": [Path(sys.argv[0]).name, *sys.argv[1:]],
    }


def write(folder: Path, **extra: Any) -> Path | None:
    """``folder/run.json``: :func:`current` plus ``extra`` (e.g. ``train``: the records of the trainings an
    evaluation scored), atomically; under ``torchrun`` the main rank alone writes it (``None`` elsewhere)."""
    if os.environ.get("RANK", "0") != "0":
        return None
    path = folder / NAME
    write_json(path, {**current(), **extra})
    return path


def of(folder: Path) -> dict[str, Any] | None:
    """The record in a stage's output folder (``folder/run.json``), or ``None``."""
    return read(folder / NAME)


def trainings(trained: Path, methods: Iterable[str]) -> dict[str, dict[str, Any] | None]:
    """The record of each method's training under ``trained`` (``results/{exp}/train``); ``None``: not recorded."""
    return {m: of(trained / m) for m in methods}


def read(path: Path) -> dict[str, Any] | None:
    """A record, or ``None`` where the file is missing (a result written before run records existed)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def commit_text(rec: Mapping[str, Any]) -> str:
    """``commit 0ea8d81``, ``commit 0ea8d81 + uncommitted changes (dirty)`` or ``no git commit`` (no checkout, or
    none yet)."""
    if not rec.get("commit"):
        return "no git commit"
    return f"commit {rec['commit'][:7]}" + (" + uncommitted changes (dirty)" if rec.get("dirty") else "")


def describe(rec: Mapping[str, Any]) -> str:
    """One line: ``host (processor, N cores), Python 3.11.2, torch 2.13.0 (CPU build), commit 0ea8d81``."""
    m = rec.get("machine", {})
    cuda = f"CUDA {rec['cuda']}" if rec.get("cuda") else "CPU build"
    gpus = f", {len(rec['gpus'])} x {rec['gpus'][0]}" if rec.get("gpus") else ""
    return (
        f"{m.get('host', '?')} ({m.get('processor', '?')}, {m.get('cores', '?')} cores{gpus}), Python "
        f"{rec.get('python', '?')}, torch {rec.get('torch', '?')} ({cuda}), {commit_text(rec)}"
    )
