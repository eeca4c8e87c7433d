"""From a params.yaml method name to its kind and typed config.

``experiments.<exp>.method_cfg.<name>: {kind: lms, rank: 32, ...}`` names a
language-specific method: ``kind`` picks the entry of ``models.ls.LS_KINDS`` and
the other keys are built into that kind's frozen config dataclass (unknown keys
and wrong types raise :class:`~lsnmt.typed.ConfigError` naming the key path). The
name ``naive`` is the plain multilingual model and needs no entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsnmt.typed import ConfigError, build

if TYPE_CHECKING:
    from lsnmt.config import Experiment, Params
    from models.ls.base import Criterion

NAIVE = "naive"
TASK_KINDS = ("lms", "lms_fd")
"""Kinds a task method may have (``task_method_cfg``): LMS and LMS+FD inserted into XLM-R (``models/xlmr.py``)."""


def typed_entry(entry: Any, path: str) -> tuple[str, Any]:
    """``(kind, typed config)`` of one ``method_cfg`` entry found at ``path``."""
    from models.ls import LS_KINDS  # lazy: models imports lsnmt.config

    if not isinstance(entry, Mapping):
        raise ConfigError(f"{path}: expected a mapping with a `kind`, got {type(entry).__name__} {entry!r}")
    kind = entry.get("kind")
    if kind is None:
        raise ConfigError(f"{path}.kind: required key is missing (known kinds: {', '.join(sorted(LS_KINDS))})")
    if kind not in LS_KINDS:
        raise ConfigError(f"{path}.kind: unknown kind {kind!r} (known kinds: {', '.join(sorted(LS_KINDS))})")
    return kind, build(LS_KINDS[kind].config, {k: v for k, v in entry.items() if k != "kind"}, path)


def resolve(exp: Experiment, name: str) -> tuple[str | None, Any]:
    """``(kind, typed config)`` of method ``name`` in ``exp``; ``(None, None)`` for ``naive``."""
    if name == NAIVE:
        return None, None
    if name not in exp.method_cfg:
        known = ", ".join([NAIVE, *exp.method_cfg])
        raise ConfigError(f"method {name!r} is not defined under experiments.{exp.name}.method_cfg (known: {known})")
    return typed_entry(exp.method_cfg[name], f"experiments.{exp.name}.method_cfg.{name}")


def resolve_task(exp: Experiment, name: str) -> tuple[str | None, Any]:
    """``(kind, typed config)`` of task method ``name`` in ``exp``'s ``task_method_cfg``; ``(None, None)``: naive."""
    if name == NAIVE:
        return None, None
    if name not in exp.task_method_cfg:
        known = ", ".join([NAIVE, *exp.task_method_cfg])
        raise ConfigError(f"task method {name!r} is not defined under experiments.{exp.name}.task_method_cfg "
                          f"(known: {known})")
    return _task_entry(exp.task_method_cfg[name], f"experiments.{exp.name}.task_method_cfg.{name}")


def _task_entry(entry: Any, path: str) -> tuple[str, Any]:
    kind, cfg = typed_entry(entry, path)
    if kind not in TASK_KINDS:
        raise ConfigError(f"{path}.kind: {kind!r} is not available for the XLM-R tasks "
                          f"(kinds: {', '.join(TASK_KINDS)})")
    return kind, cfg


def criterion(kind: str | None) -> Criterion | None:
    """The training criterion ``kind`` registers (``None``: the trainer's default)."""
    from models.ls import LS_KINDS

    return None if kind is None else LS_KINDS[kind].criterion


def check(params: Params) -> None:
    """Every ``method_cfg`` entry builds; every name in ``methods`` is ``naive`` or defined in the selected
    experiment. Raises :class:`ConfigError` naming the key path."""
    for exp_name, exp in params.experiments.items():
        for name, entry in exp.method_cfg.items():
            path = f"experiments.{exp_name}.method_cfg.{name}"
            if name == NAIVE:
                raise ConfigError(f"{path}: `naive` is the plain model and takes no method_cfg entry")
            typed_entry(entry, path)
        for name, entry in exp.task_method_cfg.items():
            path = f"experiments.{exp_name}.task_method_cfg.{name}"
            if name == NAIVE:
                raise ConfigError(f"{path}: `naive` is the plain model and takes no task_method_cfg entry")
            _task_entry(entry, path)
    selected = params.experiments[params.experiment]
    for i, name in enumerate(params.tasks):
        if name not in selected.task_cfg:
            raise ConfigError(f"tasks[{i}]: {name!r} is not a key of experiments.{params.experiment}.task_cfg "
                              f"(known: {', '.join(selected.task_cfg) or 'none'})")
    for i, name in enumerate(params.task_methods):
        if name != NAIVE and name not in selected.task_method_cfg:
            known = ", ".join([NAIVE, *selected.task_method_cfg])
            raise ConfigError(f"task_methods[{i}]: {name!r} is neither naive nor a key of "
                              f"experiments.{params.experiment}.task_method_cfg (known: {known})")
    for i, name in enumerate(params.methods):
        if name != NAIVE and name not in selected.method_cfg:
            known = ", ".join([NAIVE, *selected.method_cfg])
            raise ConfigError(f"methods[{i}]: {name!r} is neither naive nor a key of "
                              f"experiments.{params.experiment}.method_cfg (known: {known})")
