"""The ``lsnmt`` command (``python -m lsnmt`` does the same), run from the repository root as ``dvc`` and
``snakemake`` are:

    lsnmt run [ARGS]               ./run.sh [ARGS]: the pipeline on the default (README, "Two commands")
    lsnmt status                   the selected experiment, the stages DVC would run, where the report is
    lsnmt report                   the report's first screen (reports/README.md) and the page to open
    lsnmt config show EXPERIMENT   every setting of EXPERIMENT, defaults included, as YAML

A bad params.yaml or an unknown experiment is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from lsnmt.typed import ConfigError

REPORT = Path("reports/README.md")
PAGE = Path("reports/index.html")
SCREEN = 40
"""Lines of reports/README.md ``lsnmt report`` prints at most: up to its second section."""


def _root() -> Path:
    root = Path.cwd()
    if not (root / "params.yaml").is_file() or not (root / "dvc.yaml").is_file():
        raise SystemExit(f"lsnmt: {root} is not the repository's root (no params.yaml and dvc.yaml): cd there first")
    return root


def run(args: list[str]) -> None:
    """``./run.sh ARGS`` in place of this process."""
    script = _root() / "run.sh"
    os.execv(script, [str(script), *args])


def status() -> int:
    from lsnmt.experiment.params import Params

    root = _root()
    params = Params.load(root / "params.yaml")
    exp = params.get()
    print(
        f"experiment: {params.experiment} ({exp.description or 'no description'}); "
        f"methods: {', '.join(params.methods_of(params.experiment))}"
    )
    out = subprocess.run([sys.executable, "-m", "dvc", "status", "--json"], cwd=root, capture_output=True, text=True)
    if out.returncode:
        print(f"dvc status failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
        return out.returncode
    stale = [s for s in json.loads(out.stdout or "{}") if not s.endswith((".dvc",))]
    if stale:
        shown = ", ".join(stale[:8]) + (f" and {len(stale) - 8} more" if len(stale) > 8 else "")
        print(f"dvc: {len(stale)} stage(s) to run: {shown} (lsnmt run runs them)")
    else:
        print("dvc: up to date, nothing to run")
    page = root / PAGE
    print(f"report: {PAGE}" if page.is_file() else "report: none yet (lsnmt run builds it)")
    return 0


def report() -> int:
    path = _root() / REPORT
    if not path.is_file():
        print(f"lsnmt: no report yet ({REPORT} is missing): `lsnmt run` builds it", file=sys.stderr)
        return 1
    lines = path.read_text(encoding="utf-8").splitlines()
    sections = [i for i, line in enumerate(lines) if line.startswith("## ")]
    end = min(sections[1] if len(sections) > 1 else len(lines), SCREEN)
    print("\n".join(lines[:end]).rstrip())
    print(f"\n... the rest: {REPORT}; every table and figure: open {PAGE}")
    return 0


def config_show(name: str) -> int:
    import yaml

    from lsnmt.experiment.params import JOB_LISTS, Params
    from lsnmt.typed import to_dict

    params = Params.load(_root() / "params.yaml")
    exp = params.get(name)
    data = {k: v for k, v in to_dict(exp).items() if k != "name"}
    data["jobs"] = {k: list(params.jobs_of(name, k)) for k in JOB_LISTS}
    print(f"# experiment {name}: every setting, defaults included (params.yaml sets some, the typed sections the rest)")
    print(yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120, allow_unicode=True), end="")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="lsnmt",
        description="The pipeline's commands, run from the repository root (as dvc and snakemake are).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.splitlines()[3:7]),
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser("run", help="./run.sh: the pipeline on the default (extra arguments go to it)", add_help=False)
    sub.add_parser("status", help="the selected experiment, the stages DVC would run, where the report is")
    sub.add_parser("report", help="the report's first screen and the page to open")
    config = sub.add_parser("config", help="the experiments' settings").add_subparsers(dest="what", required=True)
    config.add_parser("show", help="every setting of one experiment, defaults included").add_argument("experiment")
    return p


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:  # everything after `run` is run.sh's (and DVC's or Snakemake's)
        run(argv[1:])
    args = parser().parse_args(argv)
    try:
        if args.command == "status":
            code = status()
        elif args.command == "report":
            code = report()
        else:
            code = config_show(args.experiment)
    except ConfigError as exc:
        print(f"lsnmt: {exc}", file=sys.stderr)
        code = 2
    sys.exit(code)
