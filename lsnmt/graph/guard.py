"""The first command of every dvc.yaml stage that DVC writes params.yaml values into: refuse any that is not a name.

DVC substitutes ``${experiment}`` and the items of the job lists (``${item.method}``, ``${item}``: :data:`KEYS`) into
a stage's shell command as raw text, before the stage itself can check them: ``methods: [naive, "x;touch PWNED;"]``
made ``dvc repro 'train@x;touch PWNED;'`` run ``touch PWNED``. A stage's ``cmd`` is therefore a list whose first
command is this module's (it names no params.yaml value): DVC runs each command of the list as its own shell
command, in order, and stops at the first that fails, so the stage's own command, the one that carries the values,
runs only once all of them are names (:data:`lsnmt.typed.NAME_PATTERN`, the rule ``Params.load`` applies). A value
with a newline cannot split the command either: DVC splits a one-string ``cmd`` into lines, never a list's items.

    python -m lsnmt.graph.guard [--params params.yaml]   # silent, exit 0; else one line naming the key, exit 2

The Snakefile needs no such command: it builds its job lists with ``Params.load`` before any rule runs, and its
``wildcard_constraints`` (:data:`lsnmt.graph.snakemake.NAME_WILDCARD`) make a requested path whose wildcard is not
a name match no rule.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from lsnmt.graph.stages import EACH
from lsnmt.typed import ConfigError, Name, load_yaml

KEYS = ("experiment", *EACH.values())
"""The top-level params.yaml keys whose values dvc.yaml interpolates into commands."""
COMMAND = "python -m lsnmt.graph.guard"
"""The guard as dvc.yaml runs it."""


def unsafe(params: dict[str, Any]) -> str | None:
    """The first value of :data:`KEYS` in ``params`` that is not a name, as ``key[i]: reason``; ``None``: all are."""
    for key in KEYS:
        value = params.get(key)
        if key == "experiment":
            items = [(key, value)]
        elif value is None:  # an absent job list: DVC makes no job of it
            continue
        elif isinstance(value, list):
            items = [(f"{key}[{i}]", v) for i, v in enumerate(value)]
        else:
            return f"{key}: expected a list of names, got {type(value).__name__} {value!r}"
        for where, item in items:
            reason = Name().error(item) if isinstance(item, str) else f"expected a name, got {item!r}"
            if reason is not None:
                return f"{where}: {reason}"
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, default=Path("params.yaml"), help="params file (default: params.yaml)")
    args = parser.parse_args(argv)
    try:
        params = load_yaml(args.params)
    except (ConfigError, OSError) as exc:
        sys.exit(f"{args.params}: {exc}" if isinstance(exc, OSError) else str(exc))
    problem = unsafe(params if isinstance(params, dict) else {})
    if problem is not None:
        print(f"{args.params}: {problem}; DVC would run it as part of a shell command: nothing was run",
              file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
