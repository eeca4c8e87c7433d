"""Live training metrics for an experiment tracker (``train.tracker``): every curve row (``lsnmt.train.curve``)
is also sent, as it is written, to DVCLive or TensorBoard, so that a run in progress can be watched.

* ``dvclive``: ``dvclive/<exp>/ckpt/<method>/`` at the repository root (the training's resumable folder
  ``work/<exp>/ckpt/<method>`` with ``dvclive`` for ``work``), with its own ``dvc.yaml`` declaring ``metrics.json``
  and the curves, rewritten at every row: ``dvc exp show`` (and ``dvc metrics show``, ``dvc plots show``) read it
  while the run goes on. DVC reads ``dvc.yaml`` files only outside Git-ignored folders, so this one is not ignored
  (as DVCLive's own default, ``dvclive/``, is not): ``dvc exp run`` commits it with the experiment. No DVC
  experiment is saved by DVCLive itself.
* ``tensorboard``: event files in ``<work_dir>/tensorboard/``, flushed at every row:
  ``tensorboard --logdir work/<exp>/ckpt``.
* ``none`` (the default): nothing.

Neither package is a dependency of the project: a tracker that is not installed stops the training before its
first update with one line naming the setting and the package to install.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from lsnmt.io import DataError

PACKAGES = {"dvclive": "dvclive", "tensorboard": "tensorboard"}
"""``train.tracker`` -> the package it needs (``pip install <package>``)."""


class TrackerMissing(DataError):
    """The tracker ``train.tracker`` names is not installed (a ``DataError``: the stage prints the message as one
    line and exits 1, :func:`lsnmt.runner.base.guarded`)."""


class Tracker(Protocol):
    def log(self, step: int, values: Mapping[str, float | None]) -> None:
        """Record ``values`` at update ``step`` and make them visible now (``None`` / NaN: not measured)."""
        ...


def _finite(values: Mapping[str, float | None]) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if v is not None and math.isfinite(v)}


class DVCLive:
    """DVCLive's ``Live`` in ``folder``, with its ``dvc.yaml`` there (module docstring)."""

    def __init__(self, folder: Path, resume: bool) -> None:
        from dvclive import Live

        self.live = Live(dir=str(folder), resume=resume, save_dvc_exp=False, dvcyaml=str(folder / "dvc.yaml"))

    def log(self, step: int, values: Mapping[str, float | None]) -> None:
        self.live.step = step
        for key, value in _finite(values).items():
            self.live.log_metric(f"train/{key}", value)
        self.live.make_summary()
        self.live.make_dvcyaml()


class TensorBoard:
    """``torch.utils.tensorboard``'s ``SummaryWriter`` in ``folder``, flushed at every row."""

    def __init__(self, folder: Path) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(folder))

    def log(self, step: int, values: Mapping[str, float | None]) -> None:
        for key, value in _finite(values).items():
            self.writer.add_scalar(f"train/{key}", value, step)
        self.writer.flush()


WORK = Path("work")
"""The root of the trainings' resumable folders (``lsnmt.paths``: ``work/{exp}/...``)."""


def folder(kind: str, work_dir: Path) -> Path:
    """Where tracker ``kind`` writes for the training whose resumable folder is ``work_dir`` (module docstring); a
    ``work_dir`` outside ``work/`` (a test's) gets ``work_dir/<kind>``."""
    if kind == "dvclive" and not work_dir.is_absolute() and work_dir.parts[:1] == WORK.parts:
        return Path(kind, *work_dir.parts[1:])
    return work_dir / kind


def start(kind: str, work_dir: Path, resume: bool) -> Tracker | None:
    """The tracker ``train.tracker`` names (``None`` for ``none``), writing to :func:`folder`; raises
    :class:`TrackerMissing` naming the setting and the package when that package is not installed."""
    if kind == "none":
        return None
    where = folder(kind, work_dir)
    try:
        tracker: Any = DVCLive(where, resume) if kind == "dvclive" else TensorBoard(where)
    except ImportError as exc:
        raise TrackerMissing(
            f"train.tracker: {kind} needs the package {PACKAGES[kind]}, which is not installed "
            f"(pip install {PACKAGES[kind]}; or set train.tracker: none): {exc}"
        ) from exc
    return tracker
