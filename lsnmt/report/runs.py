"""What our runs produced, per experiment, and how to describe an experiment in a caption.

A table cell "ours" reads an experiment's evaluation summary (``results/{exp}/evaluate/summary.json``, written
by the ``evaluate`` stage), its per-direction score files, or the parameter table ``reports/params.csv`` (our
counts of the papers' configurations, computed without training). A missing file means "not run": never a number.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from lsnmt.experiment.params import Experiment, Params
from models.presets import resolve_dims

DEFAULTS = ("default", "default_gpu", "default_all")
"""The experiments on the embedded data (the default's CPU and GPU scales, every method at demonstration budget):
the report's "embedded default" cells read the one params.yaml selects (the scale ``./run.sh`` chose), else
``default``; every caption names the experiment it read."""


def describe(exp: Experiment) -> str:
    """One line naming the data, model size and training budget of ``exp`` (every caption carries it)."""
    d = resolve_dims(exp.model)
    t = exp.train
    langs = len(exp.data.languages)
    return (f"experiment `{exp.name}`: {langs} languages ({exp.data.citation or exp.description.strip()}); "
            f"{exp.model.arch} {d.embed_dim}/{d.ffn_dim}, {d.encoder_layers}+{d.decoder_layers} layers; "
            f"{t.max_steps:,} updates of {t.max_tokens * t.update_freq:,} tokens")


@dataclass
class Run:
    """One experiment's results on disk (``results/{exp}``)."""

    exp: Experiment
    root: Path
    data: Path = Path("data")
    """The data folder of the experiment (``data/{exp}``)."""
    _cache: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.exp.name

    @cached_property
    def summary(self) -> dict[str, Any] | None:
        path = self.root / "evaluate" / "summary.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def methods(self) -> list[str]:
        return list(self.summary["methods"]) if self.summary else []

    def direction(self, method: str, direction: str) -> dict[str, Any] | None:
        """``results/{exp}/evaluate/{method}/{direction}.json`` or ``None``."""
        key = f"{method}/{direction}"
        if key not in self._cache:
            path = self.root / "evaluate" / method / f"{direction}.json"
            self._cache[key] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        return self._cache[key]

    @cached_property
    def prepared_report(self) -> dict[str, Any] | None:
        """``data/{exp}/prepared/report.json`` (pairs per direction after the prepare filters) or ``None``."""
        path = self.data / "prepared" / "report.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def json(self, relative: str) -> Any | None:
        """Any JSON file under ``results/{exp}`` (e.g. an analysis another stage wrote), or ``None``."""
        path = self.root / relative
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@dataclass
class Results:
    """Every experiment of ``params`` with whatever results exist under ``results_dir``."""

    params: Params
    results_dir: Path
    params_csv: Path
    data_dir: Path = Path("data")

    def run(self, name: str) -> Run | None:
        """The experiment's results, or ``None`` when params.yaml does not define ``name`` (a trimmed params
        file): its cells then read "not run" like any other missing result."""
        if name == DEFAULTS[0] and self.params.experiment in DEFAULTS:
            name = self.params.experiment
        if name not in self.params.experiments:
            return None
        return Run(self.params.get(name), self.results_dir / name, self.data_dir / name)

    @cached_property
    def runs(self) -> dict[str, Run]:
        return {name: Run(exp, self.results_dir / name, self.data_dir / name)
                for name, exp in self.params.experiments.items()}

    def describe(self, name: str) -> str:
        return describe(self.params.get(name))

    @cached_property
    def param_rows(self) -> list[dict[str, str]]:
        """Rows of ``reports/params.csv`` (empty if the ``params`` stage has not run)."""
        if not self.params_csv.is_file():
            return []
        with self.params_csv.open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
