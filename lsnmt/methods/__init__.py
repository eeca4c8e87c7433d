"""From a params.yaml method name to its kind and typed config.

``experiments.<exp>.method_cfg.<name>: {kind: lms, rank: 32, ...}`` names a
language-specific method: ``kind`` picks the entry of ``models.config.kinds.KINDS`` and
the other keys are built into that kind's frozen config dataclass, once, when the file or a stage's view is loaded
(:class:`lsnmt.methods.schema.Method`; unknown keys and wrong types raise :class:`~lsnmt.typed.ConfigError` naming
the key path); :func:`resolve` looks one up and builds nothing. The
name ``naive`` is the plain multilingual model, an entry without settings (``naive: {kind: naive}``), so that
each ``train@<method>`` tracks exactly its own entry (``lsnmt.graph.stages``).

A method may take part of its architecture from another stage's output: an LSL
method with ``architecture: <search>`` (LSL-NAS) trains the layout that the
``search`` stage selected. :func:`bind` fills it in, from the search's
``architecture.json`` when training and from the trained model's own record
(``model.pt``) afterwards, so translating never reads the search again.

One model, two routes: FD and LMS+FD (kinds ``fd``, ``lms_fd``) train both routes at once (LMS-FD Sec. 3-4) and are
read through both, Share and LS, as the paper reports them (Sec. 3.2, 5): train@<method> runs once,
translate@<method> decodes every route (:func:`models.config.kinds.routes`), and evaluate scores each (method,
route) as one *system* (:func:`systems`): ``<method>`` through the configured ``route`` (the primary),
``<method>_<route>`` through the other (``fd`` / ``fd_ls``, ``lms_fd_d16`` / ``lms_fd_d16_ls``). The other route's
hypotheses lie in a subfolder of the method's translate folder, ``translate/<method>/<route>/``
(:meth:`System.hyp_dir`), so both front ends keep one train and one translate job per method and declare nothing
new.

One model, a sparsity sweep: a CLM method with ``sweep_top_w: [w, …]`` (CLM Sec. 5.4, Figure 4) is also decoded
with only its ``w`` largest feature proportions per token, from the same ``model.pt``: one more system
``<method>_w<w>`` per ``w`` (:attr:`System.top_w`), hypotheses in ``translate/<method>/w<w>/``, decoded by
``translate@<method>`` and scored by evaluate like any system.
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
from lsnmt.methods.schema import NAIVE, Method
from lsnmt.typed import ConfigError, to_dict
from models.config import kinds
from models.config.model import ModelConfig, resolve_dims

if TYPE_CHECKING:
    from lsnmt.train.config import TrainConfig

__all__ = ["NAIVE", "System", "batching_by_kind", "bind", "record", "resolve", "resolve_system", "resolve_task",
           "search_dir", "systems", "train_settings", "with_route", "with_top_w"]


@dataclass(frozen=True, kw_only=True)
class System:
    """One evaluated system: a trained method read through one inference route."""

    name: str
    """What evaluate and the report call it: ``<method>`` (primary route) or ``<method>_<route>``."""
    method: str
    """The trained method (``train@<method>``, ``translate@<method>``)."""
    route: str | None = None
    """``None``: the method's configured route (the primary); else the route decoded instead."""
    top_w: int | None = None
    """``None``: the method's own ``top_w``; else the CLM sparsity ``w`` decoded instead (``sweep_top_w``)."""

    @property
    def subdir(self) -> str:
        """Where in the method's translate folder its hypotheses lie: ``""`` (primary), ``<route>`` or
        ``w<w>`` (a top-w sweep point)."""
        return self.route or ("" if self.top_w is None else f"w{self.top_w}")

    def hyp_dir(self, results_dir: Path, test_set: str = PRIMARY_TEST) -> Path:
        """``{results_dir}/translate/<method>``, or its subfolder ``<route>`` for another route; a test set other
        than the primary one in their subfolder of its name (``lsnmt.data.layout``)."""
        return results_dir / "translate" / self.method / self.subdir / test_set_subdir(test_set)


def resolve(method_cfg: Mapping[str, Method], name: str, where: str = "method_cfg") -> tuple[str | None, Any]:
    """``(kind, typed config)`` of method ``name`` in ``method_cfg`` (the section found at ``where``,
    ``experiments.<exp>.method_cfg``, or one that holds the method's entry only), typed at load (a lookup: it builds
    nothing); ``(None, None)`` for ``naive``."""
    if name == NAIVE:
        return None, None
    if name not in method_cfg:
        known = ", ".join([NAIVE, *method_cfg])
        raise ConfigError(f"method {name!r} is not defined under {where} (known: {known})")
    return method_cfg[name].kind, method_cfg[name].cfg


def resolve_task(task_method_cfg: Mapping[str, Method], name: str, where: str) -> tuple[str | None, Any]:
    """``(kind, typed config)`` of task method ``name`` in ``task_method_cfg`` (the section found at ``where``,
    ``experiments.<exp>.task_method_cfg``), a lookup as :func:`resolve`; ``(None, None)``: naive."""
    if name == NAIVE:
        return None, None
    if name not in task_method_cfg:
        known = ", ".join([NAIVE, *task_method_cfg])
        raise ConfigError(f"task method {name!r} is not defined under {where} (known: {known})")
    return task_method_cfg[name].kind, task_method_cfg[name].cfg


def batching_by_kind(train: TrainConfig) -> dict[str, str]:
    """``{kind: batches}`` where a kind trains on other batches than ``train.batching``: the kinds' own
    (``Kind.batching``: Switch, mixed), then ``train.batching_by_kind`` (``naive`` for the plain model)."""
    own = {k: v.batching for k, v in kinds.KINDS.items() if v.batching is not None}
    return {**own, **train.batching_by_kind}


def train_settings(train: TrainConfig, kind: str | None) -> TrainConfig:
    """``train`` for a method of ``kind`` (``None``: naive): its batches (:func:`batching_by_kind`)."""
    batching = batching_by_kind(train).get(kind or NAIVE, train.batching)
    return train if batching == train.batching else dataclasses.replace(train, batching=batching)  # type: ignore[arg-type]


def with_route(kind: str | None, cfg: Any, route: str | None) -> Any:
    """``cfg`` decoding through ``route`` (``None``: as configured); the weights are the same (Sec. 3-4)."""
    if route is None:
        return cfg
    if not kinds.routes(kind, cfg):
        raise ValueError(f"a {kind or 'naive'} model has no route {route!r}")
    return dataclasses.replace(cfg, route=route)


def with_top_w(kind: str | None, cfg: Any, w: int | None) -> Any:
    """``cfg`` decoding sweep point ``w`` of its kind (CLM: the ``w`` largest feature proportions; ``None``: as
    configured)."""
    return cfg if w is None else kinds.with_sweep(kind, cfg, w)


def systems(method_cfg: Mapping[str, Method], name: str, where: str = "method_cfg") -> tuple[System, ...]:
    """The systems of trained method ``name`` (of ``method_cfg``, found at ``where``: :func:`resolve`): the method
    through its configured route, then ``<name>_<route>`` through each other route, then ``<name>_w<w>`` for each
    ``w`` of its top-w sweep (module docstring)."""
    kind, cfg = resolve(method_cfg, name, where)
    return (System(name=name, method=name),
            *(System(name=f"{name}_{r}", method=name, route=r) for r in kinds.routes(kind, cfg)[1:]),
            *(System(name=f"{name}_w{w}", method=name, top_w=w) for w in kinds.sweep(kind, cfg)))


def resolve_system(method_cfg: Mapping[str, Method], system: System,
                   where: str = "method_cfg") -> tuple[str | None, Any]:
    """``(kind, typed config)`` that decodes ``system``: its method's (:func:`resolve`), through its route, with its
    top-w."""
    kind, cfg = resolve(method_cfg, system.method, where)
    return kind, with_top_w(kind, with_route(kind, cfg, system.route), system.top_w)


def search_dir(exp_name: str, search: str, results: Path = Path("results")) -> Path:
    """Where the ``search`` stage writes search ``search`` of experiment ``exp_name``."""
    return results / exp_name / "search" / search


def record(name: str, kind: str | None, cfg: Any) -> dict[str, Any] | None:
    """What a trained model stores about its method (``model.pt``'s ``config["method"]``); ``None`` for naive."""
    return None if kind is None else {"name": name, "kind": kind, "cfg": to_dict(cfg)}


def bind(exp: str, model: ModelConfig, name: str, kind: str | None, cfg: Any, *,
         stored: Mapping[str, Any] | None = None, results: Path = Path("results")) -> Any:
    """``cfg`` with a search-selected layout filled in (``architecture: <search>``); other configs unchanged.

    ``stored``: the method record of a trained ``model.pt`` (its layout wins: the model was trained with it);
    otherwise ``results/{exp}/search/{search}/architecture.json``, written by the ``search`` stage.
    Raises :class:`~lsnmt.io.DataError` naming the missing file or the mismatched depth.
    """
    search = kinds.searched(kind, cfg)
    if search is None:
        return cfg
    if stored is not None:
        layout = stored["cfg"]
        return kinds.with_layout(kind, cfg, tuple(layout["src"]), tuple(layout["tgt"]))
    path = search_dir(exp, search, results) / "architecture.json"
    if not path.is_file():
        raise DataError(f"{path}: not found; method {name!r} trains the architecture of search {search!r}: run "
                        f"`python -m stages.search --experiment {exp}` first")
    arch = json.loads(path.read_text(encoding="utf-8"))
    shape = kinds.KINDS[kind].model if kind is not None else None
    depth = resolve_dims(shape(cfg, model) if shape is not None else model).encoder_layers
    if len(arch["layers"]) != depth:
        raise DataError(f"{path}: search {search!r} chose {len(arch['layers'])} encoder layers, but method {name!r} "
                        f"has a {depth}-layer encoder (experiments.{exp}.method_cfg.{name}.encoder_layers)")
    return kinds.with_layout(kind, cfg, tuple(arch["src"]), tuple(arch["tgt"]))


