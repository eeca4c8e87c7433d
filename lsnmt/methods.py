"""From a params.yaml method name to its kind and typed config.

``experiments.<exp>.method_cfg.<name>: {kind: lms, rank: 32, ...}`` names a
language-specific method: ``kind`` picks the entry of ``models.ls.LS_KINDS`` and
the other keys are built into that kind's frozen config dataclass (unknown keys
and wrong types raise :class:`~lsnmt.typed.ConfigError` naming the key path). The
name ``naive`` is the plain multilingual model, an entry without settings (``naive: {kind: naive}``), so that
each ``train@<method>`` tracks exactly its own entry (``lsnmt.graph.table``).

A method may take part of its architecture from another stage's output: an LSL
method with ``architecture: <search>`` (LSL-NAS) trains the layout that the
``search`` stage selected. :func:`bind` fills it in, from the search's
``architecture.json`` when training and from the trained model's own record
(``model.pt``) afterwards, so translating never reads the search again.

One model, two routes: FD and LMS+FD (kinds ``fd``, ``lms_fd``) train both routes at once (LMS-FD Sec. 3-4)
and are read through both, Share and LS, as the paper reports them (Sec. 3.2, 5): train@<method> runs once,
translate@<method> decodes every route of :func:`routes`, and evaluate scores each (method, route) as one
*system* (:func:`systems`): ``<method>`` through the configured ``route`` (the primary), ``<method>_<route>``
through the other (``fd`` / ``fd_ls``, ``lms_fd_d16`` / ``lms_fd_d16_ls``). The other route's hypotheses lie in
a subfolder of the method's translate folder, ``translate/<method>/<route>/`` (:meth:`System.hyp_dir`), so both
front ends keep one train and one translate job per method and declare nothing new.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsnmt.data.layout import PRIMARY_TEST, test_set_subdir
from lsnmt.io import DataError
from lsnmt.typed import ConfigError, FieldError, build, to_dict

if TYPE_CHECKING:
    from lsnmt.config import Experiment, Params
    from models.ls.base import Criterion

NAIVE = "naive"
TASK_KINDS = ("lms", "lms_fd")
"""Kinds a task method may have (``task_method_cfg``): LMS and LMS+FD inserted into XLM-R (``models/xlmr.py``)."""
TWO_ROUTE_KINDS = ("fd", "lms_fd")
"""Kinds trained once and decoded through both routes, Share and LS (LMS-FD Sec. 3.2, 5)."""
ROUTES = ("share", "ls")


@dataclass(frozen=True, kw_only=True)
class System:
    """One evaluated system: a trained method read through one inference route."""

    name: str
    """What evaluate and the report call it: ``<method>`` (primary route) or ``<method>_<route>``."""
    method: str
    """The trained method (``train@<method>``, ``translate@<method>``)."""
    route: str | None = None
    """``None``: the method's configured route (the primary); else the route decoded instead."""

    @property
    def subdir(self) -> str:
        """Where in the method's translate folder its hypotheses lie: ``""`` (primary) or ``<route>``."""
        return self.route or ""

    def hyp_dir(self, results_dir: Path, test_set: str = PRIMARY_TEST) -> Path:
        """``{results_dir}/translate/<method>``, or its subfolder ``<route>`` for another route; a test set other
        than the primary one in their subfolder of its name (``lsnmt.data.layout``)."""
        return results_dir / "translate" / self.method / self.subdir / test_set_subdir(test_set)


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


def routes(kind: str | None, cfg: Any) -> tuple[str, ...]:
    """The routes a trained model is decoded through, configured first: FD and LMS+FD ``(route, other)``;
    ``()`` for a method with one way through (its system is the method itself)."""
    if kind not in TWO_ROUTE_KINDS:
        return ()
    return (cfg.route, *(r for r in ROUTES if r != cfg.route))


def with_route(kind: str | None, cfg: Any, route: str | None) -> Any:
    """``cfg`` decoding through ``route`` (``None``: as configured); the weights are the same (Sec. 3-4)."""
    if route is None:
        return cfg
    if kind not in TWO_ROUTE_KINDS:
        raise ValueError(f"a {kind or 'naive'} model has no route {route!r}")
    return dataclasses.replace(cfg, route=route)


def systems(exp: Experiment, name: str) -> tuple[System, ...]:
    """The systems of trained method ``name``: the method through its configured route, then
    ``<name>_<route>`` through each other route (module docstring)."""
    others = routes(*resolve(exp, name))[1:]
    return (System(name=name, method=name), *(System(name=f"{name}_{r}", method=name, route=r) for r in others))


def resolve_system(exp: Experiment, system: System) -> tuple[str | None, Any]:
    """``(kind, typed config)`` that decodes ``system``: its method's, through its route."""
    kind, cfg = resolve(exp, system.method)
    return kind, with_route(kind, cfg, system.route)


def criterion(kind: str | None) -> Criterion | None:
    """The training criterion ``kind`` registers (``None``: the trainer's default)."""
    from models.ls import LS_KINDS

    return None if kind is None else LS_KINDS[kind].criterion


def search_dir(exp_name: str, search: str, results: Path = Path("results")) -> Path:
    """Where the ``search`` stage writes search ``search`` of experiment ``exp_name``."""
    return results / exp_name / "search" / search


def record(name: str, kind: str | None, cfg: Any) -> dict[str, Any] | None:
    """What a trained model stores about its method (``model.pt``'s ``config["method"]``); ``None`` for naive."""
    return None if kind is None else {"name": name, "kind": kind, "cfg": to_dict(cfg)}


def bind(exp: Experiment, name: str, kind: str | None, cfg: Any, *, stored: Mapping[str, Any] | None = None,
         results: Path = Path("results")) -> Any:
    """``cfg`` with a search-selected layout filled in (``architecture: <search>``); other configs unchanged.

    ``stored``: the method record of a trained ``model.pt`` (its layout wins: the model was trained with it);
    otherwise ``results/{exp}/search/{search}/architecture.json``, written by the ``search`` stage.
    Raises :class:`~lsnmt.io.DataError` naming the missing file or the mismatched depth.
    """
    search = getattr(cfg, "architecture", None)
    if search is None:
        return cfg
    if stored is not None:
        layout = stored["cfg"]
        return dataclasses.replace(cfg, src=tuple(layout["src"]), tgt=tuple(layout["tgt"]), architecture=None)
    path = search_dir(exp.name, search, results) / "architecture.json"
    if not path.is_file():
        raise DataError(f"{path}: not found; method {name!r} trains the architecture of search {search!r}: run "
                        f"`python -m stages.search --experiment {exp.name}` first")
    arch = json.loads(path.read_text(encoding="utf-8"))
    from models.ls import LS_KINDS
    from models.presets import resolve_dims

    shape = LS_KINDS[kind].model if kind is not None else None
    depth = resolve_dims(shape(cfg, exp.model) if shape is not None else exp.model).encoder_layers
    if len(arch["layers"]) != depth:
        raise DataError(f"{path}: search {search!r} chose {len(arch['layers'])} encoder layers, but method {name!r} "
                        f"has a {depth}-layer encoder (experiments.{exp.name}.method_cfg.{name}.encoder_layers)")
    return dataclasses.replace(cfg, src=tuple(arch["src"]), tgt=tuple(arch["tgt"]), architecture=None)


def check(params: Params) -> None:
    """Every ``method_cfg``, ``task_method_cfg`` and ``search`` entry builds; a method's ``architecture`` names a
    search of its experiment; every experiment's job lists (its own ``methods`` / ``tasks`` / ``task_methods``,
    else the top-level ones: :meth:`~lsnmt.config.Params.jobs_of`) name what it defines, so that any
    experiment runs by name (``Params`` checks that the top-level lists are the selected experiment's).
    Raises :class:`ConfigError` naming the key path."""
    from lsnmt.search import searches
    from models.ls import LS_KINDS
    from models.ls.lsl import model as search_model

    for exp_name in sorted(params.experiments, key=lambda n: n != params.experiment):  # the selected one first
        exp = params.experiments[exp_name]
        known = searches(exp, exp_name)
        for name, cfg in known.items():
            _check_shape(search_model, cfg, exp, f"experiments.{exp_name}.search.{name}")
        for name, entry in exp.method_cfg.items():
            path = f"experiments.{exp_name}.method_cfg.{name}"
            if name == NAIVE:
                if entry != {"kind": NAIVE}:
                    raise ConfigError(f"{path}: `naive` is the plain model: write it as `naive: {{kind: naive}}`")
                continue
            kind, cfg = typed_entry(entry, path)
            _check_shape(LS_KINDS[kind].model, cfg, exp, path)
            search = getattr(cfg, "architecture", None)
            if search is not None and search not in known:
                raise ConfigError(f"{path}.architecture: {search!r} is not a search of experiments.{exp_name}.search "
                                  f"(known: {', '.join(known) or 'none'})")
            _check_route_names(exp, exp_name, name, kind, cfg)
        for name, entry in exp.task_method_cfg.items():
            path = f"experiments.{exp_name}.task_method_cfg.{name}"
            if name == NAIVE:
                raise ConfigError(f"{path}: `naive` is the plain model and takes no task_method_cfg entry")
            _task_entry(entry, path)
        _check_claim(exp, exp_name)
        _check_lists(params, exp_name)


def _check_claim(exp: Experiment, exp_name: str) -> None:
    """The ``claim`` section's methods build on its own model; none needs a search (the stage runs none)."""
    from models.ls import LS_KINDS

    if exp.claim is None:
        return
    for name, entry in exp.claim.methods.items():
        path = f"experiments.{exp_name}.claim.methods.{name}"
        kind, cfg = typed_entry(entry, path)
        _check_shape(LS_KINDS[kind].model, cfg, dataclasses.replace(exp, model=exp.claim.model), path)
        if getattr(cfg, "architecture", None) is not None:
            raise ConfigError(f"{path}.architecture: the claim stage runs no search: give the layout (src, tgt)")
        for route in routes(kind, cfg)[1:]:
            if f"{name}_{route}" in exp.claim.methods:
                raise ConfigError(f"experiments.{exp_name}.claim.methods.{name}_{route}: is the {route} route of "
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
    """The system of another route of ``name`` (``<name>_<route>``) is no method of its own."""
    for route in routes(kind, cfg)[1:]:
        other = f"{name}_{route}"
        if other in exp.method_cfg:
            raise ConfigError(f"experiments.{exp_name}.method_cfg.{other}: is the {route} route of {name!r}, which "
                              f"is trained once and decoded through both routes: remove {other!r}")


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
