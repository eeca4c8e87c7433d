"""Turn plain YAML data into frozen dataclasses, checking every key and type.

``build(cls, data, path)`` walks the dataclass's type hints. Errors are
:class:`ConfigError` and always start with the dotted key path at fault, e.g.
``experiments.default.data.languages[3]: 'xx' is not a known language code``.
Dataclasses may define ``__post_init__`` that raises :class:`FieldError`
(a message about one of their own fields); ``build`` prefixes it with the path.
An optional section (``Section | None``) given as an empty mapping ``{}`` is
absent (``None``), so that every experiment can list every section DVC tracks.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints


class ConfigError(ValueError):
    """A params file is wrong; the message names the file and key path."""


class FieldError(ValueError):
    """Raised by a dataclass's ``__post_init__``: ``FieldError("languages[3]", "…")``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _describe(tp: Any) -> str:
    if get_origin(tp) is Literal:
        return " | ".join(repr(a) for a in get_args(tp))
    return getattr(tp, "__name__", str(tp))


def build(tp: Any, data: Any, path: str) -> Any:
    """Convert ``data`` (from YAML) into type ``tp``; raise ConfigError naming ``path``."""
    origin = get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _build_dataclass(tp, data, path)
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
        items = {build(ktp, k, path): build(vtp, v, _join(path, str(k))) for k, v in data.items()}
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
    return data


def _build_dataclass(cls: type, data: Any, path: str) -> Any:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path or '<top>'}: expected a mapping, got {type(data).__name__} {data!r}")
    hints = get_type_hints(cls)
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
    """Inverse of :func:`build`: plain dicts/lists for YAML or JSON dumps."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (tuple, list)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, (dict, types.MappingProxyType)):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


__all__ = ["ConfigError", "FieldError", "build", "to_dict"]
