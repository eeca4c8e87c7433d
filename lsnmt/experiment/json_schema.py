"""A JSON Schema of ``params.yaml``, generated from the typed config (:class:`lsnmt.experiment.params.Params`),
for editors.

    python -m lsnmt.experiment.json_schema          # rewrite params.schema.json
    python -m lsnmt.experiment.json_schema --check  # exit 1 if it is not current (tests/test_params_schema.py too)

``params.yaml``'s first line, ``# yaml-language-server: $schema=params.schema.json``, hands it to editors that use
the YAML language server (VS Code's YAML extension, Neovim, Helix, JetBrains): completion of every key with its
docstring, and a mark on an unknown key, a wrong type, a value out of range or an unsafe name. Each frozen dataclass
becomes an object of its fields (no other key), ``Annotated`` constraints (:mod:`lsnmt.typed`) become bounds and
patterns, ``Literal`` an enum; a ``method_cfg`` / ``task_method_cfg`` / ``claim.methods`` entry is one of the method
kinds' configs (``models.config.kinds.KINDS``), chosen by its ``kind``. Relations between fields (``__post_init__``:
a language code, a method's search) are checked when the file loads, not here.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import json
import sys
import textwrap
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from lsnmt.claim.config import ClaimConfig
from lsnmt.experiment.params import Experiment, Params
from lsnmt.typed import NAME_PATTERN, Name, Pattern, Range, to_dict
from models.config.kinds import KINDS
from models.config.lsl import LSLSearchConfig

ROOT = Path(__file__).resolve().parents[2]
FILE = "params.schema.json"
"""The schema's file, beside params.yaml (which names it in its first line: :data:`MODELINE`)."""
MODELINE = f"# yaml-language-server: $schema={FILE}"
NAIVE = {
    "type": "object",
    "properties": {"kind": {"const": "naive"}},
    "required": ["kind"],
    "additionalProperties": False,
    "description": "The plain multilingual Transformer.",
}


def _name() -> dict[str, Any]:
    return {"$ref": "#/$defs/name"}


def _methods(task: bool = False, naive: bool = True) -> dict[str, Any]:
    """A mapping of method entries, each one of the kinds (the XLM-R tasks' kinds only with ``task``)."""
    kinds = [{"$ref": f"#/$defs/kind.{k}"} for k, v in KINDS.items() if v.tasks or not task]
    return {
        "type": "object",
        "propertyNames": _name(),
        "additionalProperties": {
            "type": "object",
            "required": ["kind"],
            "oneOf": ([{"$ref": "#/$defs/kind.naive"}] if naive else []) + kinds,
        },
    }


OVERRIDES: dict[tuple[type, str], Callable[[Schema], dict[str, Any]]] = {
    (Experiment, "method_cfg"): lambda s: _methods(),
    (Experiment, "task_method_cfg"): lambda s: _methods(task=True, naive=False),
    (ClaimConfig, "methods"): lambda s: _methods(naive=False),
    (Experiment, "search"): lambda s: {
        "type": "object",
        "propertyNames": _name(),
        "additionalProperties": {"$ref": s.dataclass(LSLSearchConfig)},
    },
}
"""Fields typed as raw mappings in the config (built per kind by ``lsnmt.methods.schema``), given their schema."""
SKIPPED = {(Experiment, "name")}
"""Fields not written in params.yaml (an experiment's name is its key)."""


def field_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of dataclass ``cls`` and its bases (the string under a field)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


class Schema:
    """The schema under construction: ``defs`` holds one entry per dataclass (by name)."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {
            "name": {
                "type": "string",
                "pattern": f"^(?!.*\\.\\.){NAME_PATTERN}$",
                "description": "A name: letters, digits, '_', '.', '-', starting with a letter or digit, no '..'.",
            },
            "kind.naive": NAIVE,
        }
        for kind, entry in KINDS.items():
            spec = self.object(entry.config)
            spec["properties"] = {"kind": {"const": kind}, **spec["properties"]}
            spec["required"] = ["kind", *spec.get("required", ())]
            self.defs[f"kind.{kind}"] = {**spec, "description": entry.source or spec.get("description", "")}

    def of(self, tp: Any) -> dict[str, Any]:
        """The schema of type ``tp`` (the types :func:`lsnmt.typed.build` reads)."""
        origin = get_origin(tp)
        if dataclasses.is_dataclass(tp) and isinstance(tp, type):
            return {"$ref": self.dataclass(tp)}
        if origin is Annotated:
            inner, *checks = get_args(tp)
            out = dict(self.of(inner))
            for check in checks:
                out.update(_constraint(check))
            return out
        if origin is Literal:
            return {"enum": list(get_args(tp))}
        if origin in (Union, types.UnionType):
            args = get_args(tp)
            options = [self.of(a) for a in args]
            if type(None) in args and any(dataclasses.is_dataclass(a) for a in args):  # an absent section: {}
                options.append({"type": "object", "maxProperties": 0})
            return options[0] if len(options) == 1 else {"anyOf": options}
        if origin is tuple:
            args = get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                return {"type": "array", "items": self.of(args[0])}
            return {
                "type": "array",
                "prefixItems": [self.of(a) for a in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        if origin is dict:
            key, value = get_args(tp)
            if get_origin(key) is Literal:
                return {
                    "type": "object",
                    "properties": {k: self.of(value) for k in get_args(key)},
                    "additionalProperties": False,
                }
            names = {"propertyNames": self.of(key)} if key is not str else {}
            return {"type": "object", **names, "additionalProperties": self.of(value)}
        return _scalar(tp)

    def dataclass(self, cls: type) -> str:
        """``#/$defs/<Class>``, made on first use (:meth:`object`)."""
        if cls.__name__ not in self.defs:
            self.defs[cls.__name__] = {}  # taken before the fields: a class reached again refers to itself
            self.defs[cls.__name__] = self.object(cls)
        return f"#/$defs/{cls.__name__}"

    def object(self, cls: type) -> dict[str, Any]:
        """The schema of dataclass ``cls``: an object of its fields (no other key), those without a default
        required, each with its docstring and default."""
        hints, docs = get_type_hints(cls, include_extras=True), field_docs(cls)
        props: dict[str, Any] = {}
        required = []
        for f in dataclasses.fields(cls):
            if not f.init or (cls, f.name) in SKIPPED or any((c, f.name) in SKIPPED for c in cls.__mro__):
                continue
            own = next((v for (c, n), v in OVERRIDES.items() if n == f.name and issubclass(cls, c)), None)
            spec = own(self) if own else dict(self.of(hints[f.name]))
            if f.name in docs:
                spec["description"] = docs[f.name]
            if f.default is not dataclasses.MISSING:
                spec["default"] = _json(f.default)
            elif f.default_factory is not dataclasses.MISSING:
                spec["default"] = _json(f.default_factory())
            else:
                required.append(f.name)
            props[f.name] = spec
        doc = " ".join((cls.__doc__ or "").split())
        if doc.startswith(f"{cls.__name__}("):  # the signature dataclasses write where a class has no docstring
            doc = ""
        return {
            "type": "object",
            **({"description": doc} if doc else {}),
            "properties": props,
            "additionalProperties": False,
            **({"required": required} if required else {}),
        }


def _constraint(check: Any) -> dict[str, Any]:
    if isinstance(check, Range):
        keys = {"ge": "minimum", "gt": "exclusiveMinimum", "le": "maximum", "lt": "exclusiveMaximum"}
        return {k: getattr(check, a) for a, k in keys.items() if getattr(check, a) is not None}
    if isinstance(check, Name):
        return {"pattern": f"^(?!.*\\.\\.){NAME_PATTERN}$"}
    if isinstance(check, Pattern):
        return {"pattern": f"^(?:{check.regex})$"}
    return {}


def _scalar(tp: Any) -> dict[str, Any]:
    if tp is Any:
        return {}
    names = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
    if tp not in names:
        raise TypeError(f"no JSON Schema for {tp!r}")
    return {"type": names[tp]}


def _json(value: Any) -> Any:
    """A default as JSON: dataclasses as mappings, tuples as lists."""
    return to_dict(value)


def schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of params.yaml."""
    s = Schema()
    top = s.object(Params)
    top.pop("description", None)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": FILE,
        "title": "lsnmt params.yaml",
        "description": "Generated by `python -m lsnmt.experiment.json_schema` from the typed config: do not edit.",
        **top,
        "$defs": dict(sorted(s.defs.items())),
    }


def render() -> str:
    return json.dumps(schema(), indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lsnmt.experiment.json_schema", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 if {FILE} is not current")
    args = parser.parse_args(argv)
    path, text = ROOT / FILE, render()
    if args.check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            sys.exit(f"{path} is stale: run `python -m lsnmt.experiment.json_schema`")
        return
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
