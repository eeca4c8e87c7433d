"""The schema of params.yaml's method entries (torch-free): each is built into its kind's typed config ONCE, at load.

Every ``method_cfg`` / ``task_method_cfg`` / ``claim.methods`` entry is built, by :func:`lsnmt.typed.build` through
the tables' :class:`~lsnmt.typed.Builder` (:data:`MethodTable`, :data:`TaskMethodTable`, :data:`ClaimMethodTable`),
into a :class:`Method`: its kind and its kind's frozen config (``models.config.kinds.KINDS``), the entry as written
beside them. ``Params.load`` and every stage's view (``lsnmt.view.load_view``) hold these records; their users read
``method.kind`` / ``method.cfg`` (``lsnmt.methods.resolve`` looks one up, ``naive`` included) and build nothing.
:func:`check` (run by ``lsnmt.experiment.params.Params.load``) checks what spans sections: the model a method
trains is consistent; every ``search`` entry builds; a method's ``architecture`` names a search; each experiment's
job lists name what it defines. Errors name the key path.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from lsnmt.typed import Builder, ConfigError, FieldError, SafeName, build
from models.config import kinds
from models.config.kinds import KINDS
from models.config.lsl import LSLSearchConfig
from models.config.lsl import model as search_model

if TYPE_CHECKING:
    from lsnmt.experiment.params import Experiment, Params

NAIVE = "naive"


@dataclass(frozen=True)
class Method:
    """One method entry, typed once at load: ``kind`` (a ``KINDS`` key; ``None``: naive, the plain model) and
    ``cfg``, that kind's frozen config (``None``: naive). ``entry`` is the entry as params.yaml writes it, for what
    shows or hashes the settings as written (PROTOCOL.md, ``lsnmt config show``, the claim's cache keys:
    :func:`lsnmt.typed.to_dict` dumps a method as its entry, so none of them changed when the entries were typed);
    equality is the kind's and the config's."""

    kind: str | None
    cfg: Any
    entry: Mapping[str, Any] = field(compare=False)

    def as_written(self) -> Mapping[str, Any]:
        """The entry as written (:func:`lsnmt.typed.to_dict`)."""
        return self.entry


def searches(search: Mapping[str, Any], where: str = "search") -> dict[str, Any]:
    """``{name: LSLSearchConfig}`` of the ``search`` section (found at ``where``: errors name the key path),
    typed."""
    return {name: build(LSLSearchConfig, dict(entry), f"{where}.{name}") for name, entry in search.items()}


def _extra_systems(method: Method) -> dict[str, str]:
    """``{suffix: what it is}`` of the systems decoded from a method's training besides the method itself
    (``lsnmt.methods.systems``): ``_<route>`` per other route, ``_w<w>`` per top-w sweep point (CLM Figure 4)."""
    out = {f"_{r}": f"the {r} route" for r in kinds.routes(method.kind, method.cfg)[1:]}
    out.update({f"_w{w}": f"the top-{w} sparsity decoding" for w in kinds.sweep(method.kind, method.cfg)})
    return out


def typed_entry(entry: Any, path: str) -> Method:
    """The :class:`Method` of one ``method_cfg`` entry found at ``path`` (a mapping with a ``kind``); the one place
    an entry is built into its kind's config."""
    entry = build(dict[str, Any], entry, path)  # not a mapping: build's one line, as any section's
    kind = entry.get("kind")
    if kind is None:
        raise ConfigError(f"{path}.kind: required key is missing (known kinds: {', '.join(sorted(KINDS))})")
    if kind not in KINDS:
        raise ConfigError(f"{path}.kind: unknown kind {kind!r} (known kinds: {', '.join(sorted(KINDS))})")
    return Method(kind, build(KINDS[kind].config, {k: v for k, v in entry.items() if k != "kind"}, path), entry)


def task_entry(entry: Any, path: str) -> Method:
    """:func:`typed_entry` of a ``task_method_cfg`` entry: a kind the XLM-R tasks take."""
    method = typed_entry(entry, path)
    if not KINDS[str(method.kind)].tasks:
        raise ConfigError(f"{path}.kind: {method.kind!r} is not available for the XLM-R tasks "
                          f"(kinds: {', '.join(k for k, v in KINDS.items() if v.tasks)})")
    return method


NAIVE_METHOD = Method(None, None, types.MappingProxyType({"kind": NAIVE}))
"""``naive: {kind: naive}``, the plain model."""


def _naive_entry(entry: Any, path: str) -> Method:
    """``method_cfg.naive``: exactly ``{kind: naive}``, so that ``train@naive`` tracks an entry of its own."""
    if build(dict[str, Any], entry, path) != {"kind": NAIVE}:
        raise ConfigError(f"{path}: `naive` is the plain model: write it as `naive: {{kind: naive}}`")
    return NAIVE_METHOD


def _no_naive(what: str) -> Callable[[Any, str], Method]:
    def refuse(entry: Any, path: str) -> Method:
        raise ConfigError(f"{path}: {what}")

    return refuse


def _table(entry_of: Callable[[Any, str], Method], naive: Callable[[Any, str], Method]) -> Builder:
    """The :class:`~lsnmt.typed.Builder` of a method table: ``{name: Method}``, read-only like every mapping
    :func:`~lsnmt.typed.build` makes; ``naive``'s entry through ``naive``, the others' through ``entry_of``."""

    def table(data: Any, path: str) -> Mapping[str, Method]:
        data = build(dict[str, Any], data, path)
        out = {}
        for key, entry in data.items():
            name = build(SafeName, key, f"{path}.{key}")
            out[name] = (naive if name == NAIVE else entry_of)(entry, f"{path}.{name}")
        return types.MappingProxyType(out)

    return Builder(table)


MethodTable = Annotated[dict[SafeName, Method], _table(typed_entry, _naive_entry)]
"""``method_cfg``: ``{name: Method}``; ``naive`` is written ``naive: {kind: naive}``."""
TaskMethodTable = Annotated[
    dict[SafeName, Method],
    _table(task_entry, _no_naive("`naive` is the plain model and takes no task_method_cfg entry")),
]
"""``task_method_cfg``: ``{name: Method}`` of the kinds the XLM-R tasks take; no ``naive`` entry."""
ClaimMethodTable = Annotated[
    dict[SafeName, Method],
    _table(typed_entry, _no_naive("naive is always trained (the baseline) and takes no entry")),
]
"""``claim.methods``: ``{name: Method}`` beside naive, which takes no entry."""


def check(params: Params) -> None:
    """What spans sections, for every experiment (its method entries are typed by then: :data:`MethodTable`): the
    model a method trains is consistent; every ``search`` entry builds; a method's ``architecture`` names a search of
    its experiment; every experiment's job lists (its own ``methods`` / ``tasks`` / ``task_methods``, else the
    top-level ones: :meth:`~lsnmt.experiment.params.Params.jobs_of`) name what it defines, so that any experiment
    runs by name (``Params`` checks that the top-level lists are the selected experiment's). Raises
    :class:`ConfigError` naming the key path."""
    for exp_name in sorted(params.experiments, key=lambda n: n != params.experiment):  # the selected one first
        exp = params.experiments[exp_name]
        known = searches(exp.search, f"experiments.{exp_name}.search")
        for name, cfg in known.items():
            _check_shape(search_model, cfg, exp, f"experiments.{exp_name}.search.{name}")
        for name, method in exp.method_cfg.items():
            if method.kind is None:
                continue
            path = f"experiments.{exp_name}.method_cfg.{name}"
            _check_shape(KINDS[method.kind].model, method.cfg, exp, path)
            search = kinds.searched(method.kind, method.cfg)
            if search is not None and search not in known:
                raise ConfigError(f"{path}.architecture: {search!r} is not a search of experiments.{exp_name}.search "
                                  f"(known: {', '.join(known) or 'none'})")
            _check_route_names(exp, exp_name, name, method)
        _check_claim(exp, exp_name)
        _check_lists(params, exp_name)


def _check_claim(exp: Experiment, exp_name: str) -> None:
    """The ``claim`` section's methods build on its own model; none needs a search (the stage runs none)."""
    if exp.claim is None:
        return
    for name, method in exp.claim.methods.items():
        path = f"experiments.{exp_name}.claim.methods.{name}"
        _check_shape(KINDS[str(method.kind)].model, method.cfg, dataclasses.replace(exp, model=exp.claim.model), path)
        if kinds.searched(method.kind, method.cfg) is not None:
            raise ConfigError(f"{path}.architecture: the claim stage runs no search: give the layout (src, tgt)")
        for suffix, what in _extra_systems(method).items():
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


def _check_route_names(exp: Experiment, exp_name: str, name: str, method: Method) -> None:
    """The system of another route (``<name>_<route>``) or of a top-w sweep point (``<name>_w<w>``) of ``name``
    is no method of its own."""
    for suffix, what in _extra_systems(method).items():
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
