"""A GPU check for a new node: environment, the device test tier, the trainer's throughput, a short real run.

    scripts/gpu_check.sh [--out DIR] [--skip tests,bench,run] [--steps 300]

Needs a CUDA torch and the project's Python dependencies only (no DVC, no Snakemake: stages are called directly,
``python -m stages.<name> --params <file>``); about 8 minutes on one H100. In order, each step timed and its
outcome kept (a failure is reported in the table, and the next step runs):

1. **environment**: Python, torch, CUDA, cuDNN, the GPU(s) and their memory, bf16 support, the optional packages
   (fastText's language ID is optional: reported, not fatal);
2. **tests**: the device tier (``pytest --device cuda -m cuda tests/device``);
3. **bench**: ``benchmarks/host_cost.py`` on ``default_gpu``'s batches (bf16): updates/s, trainer vs bare loop;
   ``benchmarks/throughput.py`` on ``opus100``'s transformer_big (bf16, 4,096 tokens, naive and one method per
   kind, MarianMT beside naive) and naive at 16,384 tokens (MFU);
4. **run**: a short ``default_gpu`` subset, experiment ``gpu_check`` (4 languages, naive and one method per
   family: LMS, sCLM, LSL; ``--steps`` updates each): download, prepare, sample, spm, encode, train, translate,
   then sacreBLEU's BLEU and chrF on both test sets per method.

On a machine without a GPU it says so and runs nothing that needs one (exit status 0). The table is printed at the
end and written to ``DIR/gpu_check.md`` (default ``gpu_check/``), each step's output to ``DIR/<step>.log``.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENT = "gpu_check"
METHODS = ("naive", "lms", "sclm", "lsl_src_tgt")
"""Naive and one method per family (LMS-FD, CLM, LSL) of ``default_gpu``."""
LANGUAGES = ("en", "de", "fr", "ru")
OPTIONAL = ("sentencepiece", "sacrebleu", "transformers", "fasttext", "dvc", "snakemake")


def environment() -> list[tuple[str, str]]:
    """``[(what, value)]`` of the machine and the packages."""
    import torch

    rows = [("python", platform.python_version()), ("torch", torch.__version__),
            ("cuda (torch built with)", str(torch.version.cuda)), ("cuda available", str(torch.cuda.is_available()))]
    if torch.cuda.is_available():
        rows.append(("cudnn", str(torch.backends.cudnn.version())))
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            rows.append((f"gpu {i}", f"{p.name}, {p.total_memory / 2**30:.0f} GiB, sm {p.major}.{p.minor}"))
        rows.append(("bf16", str(torch.cuda.is_bf16_supported())))
    for name in OPTIONAL:
        found = importlib.util.find_spec(name) is not None
        rows.append((name, "installed" if found else "missing (optional here)" if name != "sentencepiece"
                     else "missing"))
    return rows


def run(cmd: list[str], log: Path, timeout: int) -> tuple[str, float]:
    """Run ``cmd`` from the repository root, output to ``log``; ``("ok" | "failed (rc N)" | "timed out", s)``."""
    start = time.perf_counter()
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"$ {' '.join(cmd)}\n")
        fh.flush()
        try:
            rc = subprocess.run(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            return "timed out", time.perf_counter() - start
    return ("ok" if rc == 0 else f"failed (rc {rc})"), time.perf_counter() - start


def tail(log: Path, lines: int) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def subset_params(steps: int) -> dict[str, Any]:
    """params.yaml with one experiment, ``gpu_check``: ``default_gpu`` on :data:`LANGUAGES`, :data:`METHODS`,
    ``steps`` updates, no tasks, no x-elm, no claim."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    exp = copy.deepcopy(raw["experiments"]["default_gpu"])
    exp["data"]["languages"] = list(LANGUAGES)
    exp["data"]["zero_shot"] = ["de-fr"]
    exp["method_cfg"] = {m: exp["method_cfg"][m] for m in METHODS}
    exp["methods"] = list(METHODS)
    every = max(1, steps // 3)
    exp["train"].update(max_steps=steps, warmup_steps=min(exp["train"]["warmup_steps"], every), validate_every=every,
                        save_every=every, log_every=max(1, steps // 10))
    for key in ("claim", "xelm", "search"):
        exp.pop(key, None)
    exp["tasks"], exp["task_cfg"], exp["task_method_cfg"] = [], {}, {}
    return {"experiment": EXPERIMENT, "methods": list(METHODS), "tasks": [], "task_methods": ["naive"],
            "xelm_experts": [], "xelm_targets": [], "experiments": {EXPERIMENT: exp}}


def scores(results: Path, prepared: Path) -> list[tuple[str, str, float, float, int]]:
    """``(method, test set, BLEU, chrF, directions)``: sacreBLEU over the concatenated directions of each test set."""
    import sacrebleu

    out = []
    for method in METHODS:
        for test_set, sub in (("test (FLORES-200)", ""), ("test.tatoeba", "test.tatoeba")):
            hyps, refs, n = [], [], 0
            for hyp in sorted((results / method / sub).glob("*.hyp")):
                src, tgt = hyp.stem.split("-")
                ref = prepared / (sub or "test") / f"{src}-{tgt}.{tgt}"
                if ref.is_file():
                    hyps += hyp.read_text(encoding="utf-8").splitlines()
                    refs += ref.read_text(encoding="utf-8").splitlines()
                    n += 1
            if n and len(hyps) == len(refs):
                out.append((method, test_set, sacrebleu.corpus_bleu(hyps, [refs]).score,
                            sacrebleu.corpus_chrf(hyps, [refs]).score, n))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "gpu_check")
    ap.add_argument("--skip", default="", help="comma-separated steps to skip: tests, bench, run")
    ap.add_argument("--steps", type=int, default=300, help="updates per method in the short run")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    skip = set(filter(None, args.skip.split(",")))
    import torch

    env = environment()
    report = ["# GPU check", "", "| what | value |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in env), ""]
    if not torch.cuda.is_available():
        report.append("**No GPU**: torch sees no CUDA device (`torch.cuda.is_available()` is False), so nothing "
                      "that needs one ran: no device tests, no benchmarks, no training.")
        return finish(report, args.out)
    py = sys.executable
    steps: list[tuple[str, str, float, str]] = []
    if "tests" not in skip:
        log = args.out / "tests.log"
        status, s = run([py, "-m", "pytest", "-q", "-p", "no:xdist", "--device", "cuda", "-m", "cuda",
                         "tests/device"], log, 240)
        steps.append(("device tests", status, s, tail(log, 1)))
    if "bench" not in skip:
        for name, cmd, limit in (
            ("host cost", [py, "benchmarks/host_cost.py", "--device", "cuda", "--precision", "bf16",
                           "--updates", "50", "--repeats", "3"], 120),
            ("throughput 4096", [py, "benchmarks/throughput.py", "--device", "cuda", "--marian", "--updates", "10"],
             300),
            ("throughput 16384", [py, "benchmarks/throughput.py", "--device", "cuda", "--methods", "naive",
                                  "--max-tokens", "16384", "--updates", "10"], 120),
        ):
            log = args.out / f"{name.replace(' ', '_')}.log"
            status, s = run(cmd, log, limit)
            steps.append((name, status, s, tail(log, 30 if "throughput" in name else 5)))
    if "run" not in skip:
        steps += short_run(args.out, args.steps, py)
        report += ["## Short default_gpu run (`gpu_check`: " + ", ".join(LANGUAGES) + f"; {args.steps} updates)", "",
                   "| method | test set | BLEU | chrF | directions |", "| --- | --- | --- | --- | --- |"]
        report += [f"| {m} | {t} | {b:.2f} | {c:.2f} | {n} |"
                   for m, t, b, c, n in scores(ROOT / "results" / EXPERIMENT / "translate",
                                               ROOT / "data" / EXPERIMENT / "prepared")]
        report.append("")
    report += ["## Steps", "", "| step | outcome | seconds |", "| --- | --- | --- |",
               *(f"| {n} | {st} | {s:.0f} |" for n, st, s, _ in steps), ""]
    for name, _, _, out in steps:
        report += [f"### {name}", "", "```", out, "```", ""]
    return finish(report, args.out)


def short_run(out: Path, steps: int, py: str) -> list[tuple[str, str, float, str]]:
    """The stages of experiment ``gpu_check``, called directly; each stage's outcome."""
    params = out / "params.yaml"
    params.write_text(yaml.safe_dump(subset_params(steps), sort_keys=False), encoding="utf-8")
    done = []
    jobs = [(s, []) for s in ("download", "prepare", "sample", "spm", "encode")]
    jobs += [("train", ["--method", m]) for m in METHODS] + [("translate", ["--method", m]) for m in METHODS]
    for stage, extra in jobs:
        name = " ".join([stage, *extra[1:]])
        log = out / f"run_{stage}{'_' + extra[1] if extra else ''}.log"
        status, s = run([py, "-m", f"stages.{stage}", "--params", str(params), "--experiment", EXPERIMENT, *extra,
                         "--log", str(out / f"stage_{stage}{'_' + extra[1] if extra else ''}.log")], log, 300)
        done.append((name, status, s, tail(log, 3)))
        if status != "ok" and stage in ("download", "prepare", "sample", "spm", "encode"):
            break  # later stages need this one's output
    return done


def finish(report: list[str], out: Path) -> int:
    text = "\n".join(report)
    (out / "gpu_check.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    print(f"\n(written to {out / 'gpu_check.md'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
