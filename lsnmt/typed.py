"""Turn plain YAML data into frozen dataclasses, checking every key and type.

``build(cls, data, path)`` walks the dataclass's type hints. Errors are
:class:`ConfigError` and always start with the dotted key path at fault, e.g.
``experiments.default.data.languages[3]: 'xx' is not a known language code``.
Dataclasses may define ``__post_init__`` that raises :class:`FieldError`
(a message about one of their own fields); ``build`` prefixes it with the path.
An optional section (``Section | None``) given as an empty mapping ``{}`` is
absent (``None``), so that every experiment can list every section DVC tracks.

Constraints on one value are declared beside its field with ``Annotated``:
``max_steps: Annotated[int, Range(ge=1)] = 100_000``, ``name: SafeName``; ``build``
checks them after the type. Relations between fields stay in ``__post_init__``. A :class:`Builder` there builds
the value itself (``Annotated[dict[SafeName, Method], Builder(fn)]``: the method tables, built once per entry at
load by ``lsnmt.methods.schema``).
:func:`load_yaml` reads YAML refusing duplicate keys (PyYAML keeps the last one); :func:`load_mapping` also
checks that the document is a mapping, for the loaders that read a few keys of a params file without ``build``.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

import yaml


class ConfigError(ValueError):
    """A params file is wrong; the message names the file and key path."""


class FieldError(ValueError):
    """Raised by a dataclass's ``__post_init__``: ``FieldError("languages[3]", "…")``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Range:
    """Bounds of a number: ``Range(ge=1)``, ``Range(gt=0)``, ``Range(ge=0, lt=1)``; NaN and infinities never
    pass (``Range()`` only asks for a finite number)."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def error(self, value: Any) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be a finite number, got {value}"
        bounds = [(op, b) for op, b in ((">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt))
                  if b is not None]
        if all(_OPS[op](value, b) for op, b in bounds):
            return None
        return f"must be {' and '.join(f'{op} {b}' for op, b in bounds)}, got {value!r}"


@dataclass(frozen=True)
class Builder:
    """In ``Annotated[T, Builder(fn)]``: :func:`build` calls ``fn(data, path)`` (which raises
    :class:`ConfigError` naming ``path``) instead of building ``T`` from its type hints."""

    fn: Callable[[Any, str], Any]

    def error(self, value: Any) -> str | None:
        return None


_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}

NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}"
"""Experiment, method, task, corpus and search names: letters, digits, ``_ . -``, at most 100 characters,
starting with a letter or digit, no ``..``. They become single path components and words of the commands
DVC runs through a shell, so nothing else is allowed."""


@dataclass(frozen=True)
class Name:
    """The value is a safe name (:data:`NAME_PATTERN`)."""

    def error(self, value: Any) -> str | None:
        if re.fullmatch(NAME_PATTERN, value) and ".." not in value:
            return None
        return (f"{value!r} is not a valid name (letters, digits, '_', '.', '-', starting with a letter or digit, "
                "no '..': it becomes a file name and a word of shell commands)")


@dataclass(frozen=True)
class Pattern:
    """The value matches ``regex`` in full; ``what`` names the expected form in the error."""

    regex: str
    what: str

    def error(self, value: Any) -> str | None:
        return None if re.fullmatch(self.regex, value) else f"{value!r} is not {self.what}"


SafeName = Annotated[str, Name()]
"""A ``str`` field, list item or mapping key that names a file or a job."""
Count = Annotated[int, Range(ge=1)]
"""A positive count, size, length or interval."""
MAX_SEED = 2**32 - 1
"""Largest seed: numpy's legacy seeding and sentencepiece take 32-bit seeds, torch's ``manual_seed`` 64-bit ones
(``train.seed: 2**70`` stopped the trainer with an ``OverflowError``)."""
Seed = Annotated[int, Range(ge=0, le=MAX_SEED)]
"""A random seed: 0 to :data:`MAX_SEED` (numpy accepts none below 0)."""
INT64 = 2**63
"""Every integer of a params file lies in ``(-INT64, INT64)``: numpy and torch store them in 64 bits, and a
larger one stops a stage with an ``OverflowError`` (checked by :func:`build` for every ``int``)."""
Rate = Annotated[float, Range(ge=0, lt=1)]
"""A dropout or smoothing probability."""
Positive = Annotated[float, Range(gt=0)]
"""A finite number above 0 (learning rate, temperature, epsilon)."""
NonNegative = Annotated[float, Range(ge=0)]
"""A finite number, 0 or above (weight decay, clipping norm)."""
Sha256 = Annotated[str, Pattern(r"[0-9a-fA-F]{64}", "a sha256 (64 hex digits)")]


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _describe(tp: Any) -> str:
    if get_origin(tp) is Annotated:
        return _describe(get_args(tp)[0])
    if get_origin(tp) is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    return getattr(tp, "__name__", str(tp))


def build(tp: Any, data: Any, path: str) -> Any:
    """Convert ``data`` (from YAML) into type ``tp``; raise ConfigError naming ``path``."""
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _build_dataclass(tp, data, path)
    if origin is Annotated:
        inner, *checks = get_args(tp)
        own = next((c for c in checks if isinstance(c, Builder)), None)
        value = own.fn(data, path) if own is not None else build(inner, data, path)
        for check in checks:
            if (message := check.error(value)) is not None:
                raise ConfigError(f"{path}: {message}")
        return value
    if origin is Literal:
        if data not in get_args(tp):
            raise ConfigError(f"{path}: {data!r} is not one of {_describe(tp)}")
        return data
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if type(None) in args and (data is None or (data == {} and any(dataclasses.is_dataclass(a) for a in args))):
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return build(arg, data, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{path}: {data!r} matches none of {tp}")
    if origin is tuple:
        (item, _ellipsis) = get_args(tp)
        if not isinstance(data, list):
            raise ConfigError(f"{path}: expected a list, got {type(data).__name__} {data!r}")
        return tuple(build(item, x, _join(path, i)) for i, x in enumerate(data))
    if origin is dict:
        ktp, vtp = get_args(tp)
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: expected a mapping, got {type(data).__name__} {data!r}")
        items = {build(ktp, k, _join(path, str(k))): build(vtp, v, _join(path, str(k))) for k, v in data.items()}
        return types.MappingProxyType(items)
    return _build_scalar(tp, data, path)


def _build_scalar(tp: Any, data: Any, path: str) -> Any:
    if tp is Any:
        return data
    if tp is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if tp in (int, float) and isinstance(data, bool):
        raise ConfigError(f"{path}: expected {tp.__name__}, got bool {data!r}")
    if not isinstance(data, tp):
        raise ConfigError(f"{path}: expected {_describe(tp)}, got {type(data).__name__} {data!r}")
    if tp is int and not -INT64 < data < INT64:
        raise ConfigError(f"{path}: {data} does not fit in 64 bits (|value| < 2**63)")
    return data


def _build_dataclass(cls: type, data: Any, path: str) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path or '<top>'}: expected a mapping, got {type(data).__name__} {data!r}")
    hints = get_type_hints(cls, include_extras=True)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{_join(path, unknown[0])}: unknown key (known keys: {', '.join(sorted(fields))})")
    kwargs = {}
    for name, field in fields.items():
        if name in data:
            kwargs[name] = build(hints[name], data[name], _join(path, name))
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{_join(path, name)}: required key is missing")
    try:
        return cls(**kwargs)
    except FieldError as exc:
        raise ConfigError(f"{_join(path, exc.field)}: {exc.message}") from None


def to_dict(obj: Any) -> Any:
    """Inverse of :func:`build`: plain dicts/lists for YAML or JSON dumps. An object with an ``as_written()`` dumps
    as what it returns (a typed method entry: the entry as params.yaml writes it, ``lsnmt.methods.schema.Method``)."""
    if hasattr(obj, "as_written") and not isinstance(obj, type):
        return to_dict(obj.as_written())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, (dict, types.MappingProxyType)):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


class DuplicateKeyError(yaml.YAMLError):
    """A YAML mapping gives one key twice."""


# libyaml's parser where PyYAML was built with it (the wheels are): about 7x faster on params.yaml than the pure
# Python one, which the stages and the test suite's collection parse dozens of times; same marks, same errors.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UniqueKeyLoader(_SafeLoader):
    """``yaml.SafeLoader`` (libyaml's when available) that refuses a mapping key given twice (PyYAML silently keeps
    the last value).

    Keys a merge (``<<: *anchor``) brings in may be overridden; only the keys written in one mapping count."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            mark = key_node.start_mark
            if key in seen:
                raise DuplicateKeyError(f"{mark.name}:{mark.line + 1}: duplicate key {key!r} "
                                        f"(first given on line {seen[key]})")
            seen[key] = mark.line + 1
        return super().construct_mapping(node, deep=deep)


def load_yaml(path: str | Path) -> Any:
    """The YAML document of ``path``; :class:`ConfigError` (one line, naming the file and line) on a syntax
    error or a duplicate key."""
    try:
        with open(path, encoding="utf-8") as fh:
            return yaml.load(fh, Loader=UniqueKeyLoader)  # a SafeLoader
    except DuplicateKeyError as exc:
        raise ConfigError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None


def mapping_of(value: Any, key: str, path: str | Path) -> dict[Any, Any]:
    """``value``, the key ``key`` of the file ``path`` (``<top>``: the whole document), when it is a mapping; else
    :class:`ConfigError`, one line naming the file, the key and what it holds, in :func:`build`'s words."""
    if isinstance(value, dict):
        return value
    if value is None:
        got = "an empty file" if key == "<top>" else "null"
    else:
        text = repr(value)
        got = f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
    raise ConfigError(f"{path}: {key}: expected a mapping, got {got}")


def load_mapping(path: str | Path) -> dict[Any, Any]:
    """The YAML document of ``path``, which must be a mapping (a params file's top level): what a loader that reads
    a few keys of the file checks first, as :func:`build` does for the whole (the data stages' view,
    ``lsnmt.graph.dvc``); :func:`mapping_of`'s error otherwise (a list, a scalar, an empty file)."""
    return mapping_of(load_yaml(path), "<top>", path)


__all__ = ["INT64", "MAX_SEED", "NAME_PATTERN", "Builder", "ConfigError", "Count", "DuplicateKeyError", "FieldError",
           "Name", "NonNegative", "Pattern", "Positive", "Range", "Rate", "SafeName", "Seed", "Sha256",
           "UniqueKeyLoader", "build", "load_mapping", "load_yaml", "mapping_of", "to_dict"]
