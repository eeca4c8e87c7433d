"""The schema of params.yaml's method entries (torch-free; run by ``lsnmt.experiment.params.Params.load``).

Every ``method_cfg`` / ``task_method_cfg`` / ``claim.methods`` entry builds into its kind's typed config
(``models.config.kinds.KINDS``) and the model it trains is consistent; every ``search`` entry builds; a method's
``architecture`` names a search; each experiment's job lists name what it defines. Errors name the key path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lsnmt.typed import ConfigError, FieldError, build
from models.config import kinds
from models.config.kinds import KINDS
from models.config.lsl import LSLSearchConfig
from models.config.lsl import model as search_model

if TYPE_CHECKING:
    from lsnmt.experiment.params import Experiment, Params

NAIVE = "naive"


def searches(search: Mapping[str, Any], where: str = "search") -> dict[str, Any]:
    """``{name: LSLSearchConfig}`` of the ``search`` section (found at ``where``: errors name the key path),
    typed."""
    return {name: build(LSLSearchConfig, dict(entry), f"{where}.{name}") for name, entry in search.items()}


def _extra_systems(kind: str, cfg: Any) -> dict[str, str]:
    """``{suffix: what it is}`` of the systems decoded from a method's training besides the method itself
    (``lsnmt.methods.systems``): ``_<route>`` per other route, ``_w<w>`` per top-w sweep point (CLM Figure 4)."""
    out = {f"_{r}": f"the {r} route" for r in kinds.routes(kind, cfg)[1:]}
    out.update({f"_w{w}": f"the top-{w} sparsity decoding" for w in kinds.sweep(kind, cfg)})
    return out


def typed_entry(entry: Any, path: str) -> tuple[str, Any]:
    """``(kind, typed config)`` of one ``method_cfg`` entry found at ``path``."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{path}: expected a mapping with a `kind`, got {type(entry).__name__} {entry!r}")
    kind = entry.get("kind")
    if kind is None:
        raise ConfigError(f"{path}.kind: required key is missing (known kinds: {', '.join(sorted(KINDS))})")
    if kind not in KINDS:
        raise ConfigError(f"{path}.kind: unknown kind {kind!r} (known kinds: {', '.join(sorted(KINDS))})")
    return kind, build(KINDS[kind].config, {k: v for k, v in entry.items() if k != "kind"}, path)


def task_entry(entry: Any, path: str) -> tuple[str, Any]:
    kind, cfg = typed_entry(entry, path)
    if not KINDS[kind].tasks:
        raise ConfigError(f"{path}.kind: {kind!r} is not available for the XLM-R tasks "
                          f"(kinds: {', '.join(k for k, v in KINDS.items() if v.tasks)})")
    return kind, cfg


def check(params: Params) -> None:
    """Every ``method_cfg``, ``task_method_cfg`` and ``search`` entry builds; a method's ``architecture`` names a
    search of its experiment; every experiment's job lists (its own ``methods`` / ``tasks`` / ``task_methods``,
    else the top-level ones: :meth:`~lsnmt.experiment.params.Params.jobs_of`) name what it defines, so that any
    experiment runs by name (``Params`` checks that the top-level lists are the selected experiment's).
    Raises :class:`ConfigError` naming the key path."""
    for exp_name in sorted(params.experiments, key=lambda n: n != params.experiment):  # the selected one first
        exp = params.experiments[exp_name]
        known = searches(exp.search, f"experiments.{exp_name}.search")
        for name, cfg in known.items():
            _check_shape(search_model, cfg, exp, f"experiments.{exp_name}.search.{name}")
        for name, entry in exp.method_cfg.items():
            path = f"experiments.{exp_name}.method_cfg.{name}"
            if name == NAIVE:
                if entry != {"kind": NAIVE}:
                    raise ConfigError(f"{path}: `naive` is the plain model: write it as `naive: {{kind: naive}}`")
                continue
            kind, cfg = typed_entry(entry, path)
            _check_shape(KINDS[kind].model, cfg, exp, path)
            search = kinds.searched(kind, cfg)
            if search is not None and search not in known:
                raise ConfigError(f"{path}.architecture: {search!r} is not a search of experiments.{exp_name}.search "
                                  f"(known: {', '.join(known) or 'none'})")
            _check_route_names(exp, exp_name, name, kind, cfg)
        for name, entry in exp.task_method_cfg.items():
            path = f"experiments.{exp_name}.task_method_cfg.{name}"
            if name == NAIVE:
                raise ConfigError(f"{path}: `naive` is the plain model and takes no task_method_cfg entry")
            task_entry(entry, path)
        _check_claim(exp, exp_name)
        _check_lists(params, exp_name)


def _check_claim(exp: Experiment, exp_name: str) -> None:
    """The ``claim`` section's methods build on its own model; none needs a search (the stage runs none)."""
    if exp.claim is None:
        return
    for name, entry in exp.claim.methods.items():
        path = f"experiments.{exp_name}.claim.methods.{name}"
        kind, cfg = typed_entry(entry, path)
        _check_shape(KINDS[kind].model, cfg, dataclasses.replace(exp, model=exp.claim.model), path)
        if kinds.searched(kind, cfg) is not None:
            raise ConfigError(f"{path}.architecture: the claim stage runs no search: give the layout (src, tgt)")
        for suffix, what in _extra_systems(kind, cfg).items():
            if f"{name}{suffix}" in exp.claim.methods:
                raise ConfigError(f"experiments.{exp_name}.claim.methods.{name}{suffix}: is {what} of "
                                  f"{name!r}, decoded from the same training: remove it")


def _check_shape(shape: Any, cfg: Any, exp: Experiment, path: str) -> None:
    """``shape(cfg, exp.model)``, the model config a method or search trains (``None``: the experiment's),
    is consistent (heads divide a width it sets); else :class:`ConfigError` naming ``path``."""
    if shape is None:
        return
    try:
        shape(cfg, exp.model)
    except FieldError as exc:
        raise ConfigError(f"{path}: {exc.message} (in the model it trains)") from None


def _check_route_names(exp: Experiment, exp_name: str, name: str, kind: str, cfg: Any) -> None:
    """The system of another route (``<name>_<route>``) or of a top-w sweep point (``<name>_w<w>``) of ``name``
    is no method of its own."""
    for suffix, what in _extra_systems(kind, cfg).items():
        other = f"{name}{suffix}"
        if other in exp.method_cfg:
            raise ConfigError(f"experiments.{exp_name}.method_cfg.{other}: is {what} of {name!r}, which is trained "
                              f"once and decoded as each of its systems: remove {other!r}")


def _check_lists(params: Params, exp_name: str) -> None:
    """The job lists experiment ``exp_name`` runs name what it defines."""
    exp = params.experiments[exp_name]

    def check_list(key: str, defined: Mapping[str, Any], section: str, naive: bool) -> None:
        own = getattr(exp, key) is not None
        where = f"experiments.{exp_name}.{key}" if own else key
        inherited = "" if own or exp_name == params.experiment else \
            f"; experiments.{exp_name} has no own `{key}` and inherits the top-level list"
        for i, name in enumerate(params.jobs_of(exp_name, key)):
            if not (naive and name == NAIVE) and name not in defined:
                known = ", ".join(([NAIVE] if naive else []) + list(defined)) or "none"
                what = "neither naive nor a key" if naive else "not a key"
                hint = " (`naive: {kind: naive}` too: each train@<method> tracks its method_cfg entry)" \
                    if name == NAIVE else ""
                raise ConfigError(f"{where}[{i}]: {name!r} is {what} of experiments.{exp_name}.{section} "
                                  f"(known: {known}){inherited}{hint}")

    check_list("methods", exp.method_cfg, "method_cfg", naive=False)
    check_list("tasks", exp.task_cfg, "task_cfg", naive=False)
    if params.jobs_of(exp_name, "tasks"):
        check_list("task_methods", exp.task_method_cfg, "task_method_cfg", naive=True)
