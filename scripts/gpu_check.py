"""The GPU check of a new node, on a GPU within 8 minutes, or every step of it at tiny size on a CPU (``--cpu``).

    scripts/gpu_check.sh [--cpu] [--out DIR] [--work DIR] [--minutes 8] [--skip tests,bench,train]
                         [--compile {none,default,reduce-overhead,cudagraphs,as-set}]

Needs a CUDA torch and the project's Python dependencies only (no DVC, no Snakemake: stages are called directly,
``python -m stages.<name> --params <file>``). The steps (``lsnmt/gpucheck/check.py``): the device test tier beside
the data stages (in the stage table's order), the benchmarks, naive alone then four trainings together in
time-boxes (stopped and finished where the box ends, when it ends first), translation and sacreBLEU's scores; each
step's budget is printed before it starts, and no step can overrun it. The output ends with one table: each
figure, its target, met / not met (``n/a (CPU)`` for a GPU target with ``--cpu``). ``DIR/gpu_check.md`` holds the
same, ``DIR/gpu_check.log`` every step's log, ``DIR/*.json`` the benchmarks' figures; the stages' data, models
and logs go to ``--work`` (default ``DIR/run``). Exit status 1 when a step did not end well.

Without a GPU and without ``--cpu`` it says so and runs nothing (exit status 0).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt.gpucheck import report, steps  # noqa: E402
from lsnmt.gpucheck.check import Check, run  # noqa: E402
from lsnmt.gpucheck.plan import check_params, cpu_plan, gpu_plan  # noqa: E402
from lsnmt.gpucheck.report import Findings  # noqa: E402

OPTIONAL = ("sentencepiece", "sacrebleu", "transformers", "fasttext", "dvc", "snakemake")


def environment() -> list[tuple[str, str]]:
    """``[(what, value)]`` of the machine and the packages."""
    import torch

    rows = [
        ("python", platform.python_version()),
        ("torch", torch.__version__),
        ("cuda (torch built with)", str(torch.version.cuda)),
        ("cuda available", str(torch.cuda.is_available())),
    ]
    if torch.cuda.is_available():
        rows.append(("cudnn", str(torch.backends.cudnn.version())))
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            rows.append((f"gpu {i}", f"{p.name}, {p.total_memory / 2**30:.0f} GiB, sm {p.major}.{p.minor}"))
        rows.append(("bf16", str(torch.cuda.is_bf16_supported())))
    for name in OPTIONAL:
        found = importlib.util.find_spec(name) is not None
        rows.append(
            (name, "installed" if found else "missing" if name == "sentencepiece" else "missing (optional here)")
        )
    return rows


def machine(env: list[tuple[str, str]], args: argparse.Namespace, compile: str) -> str:
    d = dict(env)
    where = "CPU (--cpu: tiny sizes)" if args.cpu else d.get("gpu 0", "no GPU")
    skipped = f"; skipped: {args.skip}" if args.skip else ""
    return (
        f"{where}; torch {d['torch']}, CUDA {d['cuda (torch built with)']}, Python {d['python']}; "
        f"train.compile {compile}{skipped}"
    )


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", action="store_true", help="every step on the CPU at tiny size (what a test runs)")
    ap.add_argument("--out", type=Path, default=ROOT / "gpu_check", help="the report's folder (default gpu_check/)")
    ap.add_argument("--work", type=Path, help="the stages' working folder (default OUT/run)")
    ap.add_argument("--minutes", type=float, default=8.0, help="the GPU check's time (default 8)")
    ap.add_argument(
        "--compile",
        choices=("none", "default", "reduce-overhead", "cudagraphs", "as-set"),
        help="train.compile of the trainings (default: as default_gpu sets it; none with --cpu)",
    )
    ap.add_argument("--skip", default="", help="comma-separated steps to skip: tests, bench, train")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    import torch

    env = environment()
    head = ["# GPU check", "", "| what | value |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in env), ""]
    if not args.cpu and not torch.cuda.is_available():
        head.append(
            "**No GPU**: torch sees no CUDA device (`torch.cuda.is_available()` is False), so nothing "
            "that needs one ran: no device tests, no benchmarks, no training (`--cpu` runs every step at "
            "tiny size on the CPU)."
        )
        return write(out, head, [])
    plan = cpu_plan() if args.cpu else gpu_plan(args.minutes)
    compile = args.compile or ("none" if args.cpu else "as-set")
    found = Findings(
        gpu=not args.cpu, machine=machine(env, args, compile), minutes=args.minutes, first_n=plan.first_updates
    )
    c = Check(
        plan,
        out,
        (args.work or out / "run").resolve(),
        set(filter(None, args.skip.split(","))),
        steps.Ledger(plan.total),
        found,
    )
    c.params.write_text(yaml.safe_dump(check_params(plan, compile), sort_keys=False), encoding="utf-8")
    try:
        run(c)
    finally:
        found.seconds, t = c.ledger.elapsed(), os.times()
        found.cpu_seconds = t.user + t.system + t.children_user + t.children_system
        combined_log(out / "gpu_check.log", c.logs)
        lines = [
            "## Steps",
            "",
            "| step | outcome | seconds | budget |",
            "| --- | --- | --- | --- |",
            *(f"| {o.name} | {o.status} | {o.seconds:.0f} | {o.budget:.0f} |" for o in found.steps),
            "",
            "## Figures and targets",
            "",
            report.table(report.rows(found)),
        ]
        write(out, head, lines)
    return 0 if all(o.ok or o.status == "stopped at its box" for o in found.steps) else 1


def combined_log(path: Path, logs: list[Path], tail: int = 300) -> None:
    """Every step's log in one file, the last ``tail`` lines of each (the device tool brings back few files)."""
    with path.open("w", encoding="utf-8") as fh:
        for log in logs:
            for part in (log, log.with_suffix(".out")):
                if part.is_file():
                    lines = part.read_text(encoding="utf-8", errors="replace").splitlines()[-tail:]
                    fh.write(f"===== {part.name} =====\n" + "\n".join(lines) + "\n")


def write(out: Path, head: list[str], lines: list[str]) -> int:
    text = "\n".join([*head, *lines])
    (out / "gpu_check.md").write_text(text + "\n", encoding="utf-8")
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
