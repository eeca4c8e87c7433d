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


def criterion(kind: str | None) -> Criterion | None:
    """The training criterion ``kind`` registers (``None``: the trainer's default)."""
    from models.ls import LS_KINDS

    return None if kind is None else LS_KINDS[kind].criterion


def _check_names(names: tuple[str, ...], path: str, exp: Experiment) -> None:
    for i, name in enumerate(names):
        if name != NAIVE and name not in exp.method_cfg:
            known = ", ".join([NAIVE, *exp.method_cfg])
            raise ConfigError(f"{path}[{i}]: {name!r} is neither naive nor a key of "
                              f"experiments.{exp.name or '?'}.method_cfg (known: {known})")


def check(params: Params) -> None:
    """Every ``method_cfg`` entry builds; every name in ``methods`` (top-level: of the selected experiment;
    ``experiments.X.methods``: of X) is ``naive`` or defined there; where the selected experiment has its own
    list, the top-level ``methods`` (DVC's matrix) equals it. Raises :class:`ConfigError` naming the key path."""
    for exp_name, exp in params.experiments.items():
        for name, entry in exp.method_cfg.items():
            path = f"experiments.{exp_name}.method_cfg.{name}"
            if name == NAIVE:
                raise ConfigError(f"{path}: `naive` is the plain model and takes no method_cfg entry")
            typed_entry(entry, path)
        if exp.methods is not None:
            _check_names(exp.methods, f"experiments.{exp_name}.methods", _named(exp, exp_name))
    selected = _named(params.experiments[params.experiment], params.experiment)
    if selected.methods is not None and tuple(params.methods) != tuple(selected.methods):
        own = ",".join(selected.methods)
        raise ConfigError(f"methods: {list(params.methods)} differ from experiments.{params.experiment}.methods "
                          f"{list(selected.methods)}; dvc.yaml trains the top-level list, so make them equal "
                          f"(e.g. dvc exp run -S experiment={params.experiment} -S 'methods=[{own}]')")
    _check_names(params.methods, "methods", selected)


def _named(exp: Experiment, name: str) -> Experiment:
    import dataclasses

    return dataclasses.replace(exp, name=name)
