"""A stage's typed view of ``params.yaml``: exactly the sections of one experiment the stage reads.

A view is a frozen, ``kw_only`` dataclass whose fields are sections (or keys) of ``experiments.<name>``, composed
from the shared section classes (fairseq2's recipe configs compose ``model``, ``trainer``, ``optimizer``; DVC's
example-get-started stages each read their own section). A field reads the key of its name, or the dotted key
given by :func:`section` (``metrics: ... = section("evaluate.metrics", ...)``). :func:`keys` lists them: they are
the stage table's ``params`` of the stage (:mod:`lsnmt.graph.stages`), so what reruns a stage, in both front ends,
is what its view reads and nothing else.

:func:`load_view` is the one loader: it reads those keys only (the other sections are neither read nor checked;
``lsnmt.experiment.params.Params.load`` checks the whole file for the graph) and names the file and key path in every
error; :func:`job_list` reads a job list the experiment may set for itself (``tasks``: its own, else the top-level
one).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

from lsnmt.typed import ConfigError, SafeName, build, load_mapping, mapping_of

KEY = "params_key"
"""The field metadata that holds a view field's dotted params key."""

V = TypeVar("V")


def section(key: str, **kwargs: Any) -> Any:
    """A view field that reads the dotted key ``key`` of the experiment (``dataclasses.field(**kwargs)`` else)."""
    return dataclasses.field(metadata={KEY: key}, **kwargs)


def key_of(f: dataclasses.Field[Any]) -> str:
    """The params key a view field reads: its :func:`section` key, else its name."""
    return str(f.metadata.get(KEY, f.name))


def _wild(f: dataclasses.Field[Any]) -> bool:
    """A field whose key ends in a job's wildcard (``method_cfg.{method}``): it holds ``{job: entry}``, the one entry
    of the section that the job reads."""
    key = key_of(f)
    if "{" in key and not (key.endswith("}") and "{" not in key.rsplit(".", 1)[0]):
        raise ValueError(f"{key}: a job's wildcard may only be a key's last part")
    return "{" in key


def keys(view: type) -> tuple[str, ...]:
    """The keys under ``experiments.<name>`` that ``view`` reads, in field order."""
    return tuple(key_of(f) for f in dataclasses.fields(view))


_ABSENT = object()


def lookup(mapping: dict[str, Any], key: str, where: str, path: Path) -> Any:
    """``mapping[a][b]`` for the key ``a.b`` (``_ABSENT`` where a part is missing or empty); a part that is not a
    mapping is one line naming the file and its key path (``where``: the path of ``mapping``)."""
    node: Any = mapping
    parts = key.split(".")
    for i, part in enumerate(parts):
        if i:
            if node is None:
                return _ABSENT
            node = mapping_of(node, f"{where}.{'.'.join(parts[:i])}", path)
        if part not in node:
            return _ABSENT
        node = node[part]
    return node


def experiment_mapping(path: str | Path, name: str | None) -> tuple[str, dict[str, Any]]:
    """``(name, experiments.<name>)`` of the params file ``path`` (``name`` default: its ``experiment``). The file's
    shape is checked first, as ``Params.load``'s ``build`` does: its top level, ``experiments`` and the experiment
    are mappings (a list, a scalar, an empty file stop with one line naming the file and the key)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: params file not found")
    raw = load_mapping(path)
    where = "experiment" if name is None else "--experiment"
    try:  # a name becomes a path (data/{exp}/...): one that is not a name stops here
        name = build(SafeName, raw.get("experiment") if name is None else name, where)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    experiments = _mapping(raw, "experiments", "experiments", path)
    if name not in experiments:
        raise ConfigError(f"{path}: experiment {name!r} is not defined (known: {', '.join(experiments) or 'none'})")
    return str(name), _mapping(experiments, str(name), f"experiments.{name}", path)


def _mapping(parent: dict[str, Any], key: str, where: str, path: Path) -> dict[str, Any]:
    value = parent.get(key)
    return mapping_of({} if value is None else value, where, path)


def load_view(path: str | Path, name: str | None, view: type[V], fill: dict[str, str] | None = None) -> tuple[str, V]:
    """``(name, view)``: the keys ``view`` reads of experiment ``name`` (``None``: the file's ``experiment``) of the
    params file ``path``, typed; a key the experiment does not write takes the field's default. A key with a job's
    wildcard (``method_cfg.{method}``: the stage table's ``params`` of a stage run per method) reads the job's entry,
    ``fill`` (``{"method": "lms"}``), into the field as ``{"lms": entry}``: the slice of the section the job reads.
    Errors name the file and the key path (``experiments.<name>.<key>...``)."""
    path = Path(path)
    name, exp = experiment_mapping(path, name)
    where = f"experiments.{name}"
    shaped = {}
    for f in dataclasses.fields(view):  # type: ignore[arg-type]
        key = key_of(f).format(**(fill or {}))
        value = lookup(exp, key, where, path)
        if value is not _ABSENT:
            shaped[f.name] = {key.rsplit(".", 1)[1]: value} if _wild(f) else value
    try:
        return name, build(view, shaped, where)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {_keyed(str(exc), view, where, fill or {})}") from None


OWN_LISTS = ("methods", "tasks", "task_methods")
"""Job lists an experiment may set for itself (``None``: the top-level list)."""


def job_list(path: str | Path, name: str | None, key: str) -> tuple[str, ...]:
    """The job list ``key`` (of :data:`OWN_LISTS`) of experiment ``name``: its own list, else the top-level one
    (``Params.load`` checks the top-level lists against the selected experiment for the graph)."""
    if key not in OWN_LISTS:
        raise KeyError(key)
    path = Path(path)
    name, exp = experiment_mapping(path, name)
    own, where = exp.get(key), f"experiments.{name}.{key}"
    if own is None:
        own, where = load_mapping(path).get(key), key
    try:
        return tuple(build(tuple[SafeName, ...], [] if own is None else own, where))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _keyed(message: str, view: type, where: str, fill: dict[str, str]) -> str:
    """``message`` with a field's name written as the key it reads (``metrics`` -> ``evaluate.metrics``)."""
    for f in dataclasses.fields(view):
        head = f"{where}.{f.name}"
        if (
            key_of(f) != f.name
            and not _wild(f)
            and (message.startswith(head + ":") or message.startswith(head + ".") or message.startswith(head + "["))
        ):
            return f"{where}.{key_of(f).format(**fill)}{message[len(head) :]}"
    return message
