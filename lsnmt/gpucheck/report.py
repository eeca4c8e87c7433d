"""The check's one table: each figure, its target, and met / not met (``n/a (CPU)`` for a GPU target on a CPU).

The targets are issue 38's "Targets on a GPU" and issue 39's update-time ratios: naive alone >= 30 updates/s and
its first 100 updates <= 10 s; four trainings on one GPU together >= 80 updates/s; every training finishes its
updates; opus100's transformer_big (bf16, 4,096 tokens) >= 1.15x MarianMT's speed and >= 40% MFU at 16,384
tokens; update time over naive's: LSL <= 1.15x, LMS <= 1.08x, CLSR <= 1.3x, Switch <= 1.6x, FD and LMS+FD <= 2.0x.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsnmt.gpucheck.scores import Score
from lsnmt.gpucheck.steps import Outcome

RATIOS = {"lsl": 1.15, "lms": 1.08, "clsr": 1.3, "switch": 1.6, "fd": 2.0, "lms_fd": 2.0}
"""Update time over naive's, at most (issue 39)."""
NA = "n/a (CPU)"


@dataclass(frozen=True)
class Row:
    figure: str
    measured: str
    target: str = "-"
    verdict: str = "-"


@dataclass
class Findings:
    """What the check measured (``None``: not measured)."""

    gpu: bool
    machine: str = ""
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    """CPU time of the check and every process it started."""
    minutes: float = 8.0
    steps: list[Outcome] = field(default_factory=list)
    first_n: int = 100
    first: float | None = None
    alone_rate: float | None = None
    together: tuple[float, float, int] | None = None
    trained: dict[str, str] = field(default_factory=dict)
    """Method -> how far it trained, in words."""
    finished_all: bool | None = None
    host: Mapping[str, Any] | None = None
    throughput: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """``default_gpu`` / ``opus100`` -> ``benchmarks/throughput.py --json``'s content."""
    scores: list[Score] = field(default_factory=list)
    signatures: str = ""


def verdict(value: float | None, ok: Callable[[float], bool], gpu_target: bool, gpu: bool) -> str:
    if gpu_target and not gpu:
        return NA
    if value is None or value != value:
        return "not measured"
    return "met" if ok(value) else "not met"


def _num(value: float | None, fmt: str, missing: str = "not measured") -> str:
    return missing if value is None or value != value else fmt.format(value)


def ratio_rows(name: str, bench: Mapping[str, Any] | None, gpu: bool) -> list[Row]:
    """Marian, MFU and kind / naive rows of one throughput run (``name``: ``default_gpu`` or ``opus100``)."""
    rows_in = list(bench.get("rows", [])) if bench else []
    naive = {
        (r["experiment"], r["max_tokens"]): r["seconds"] for r in rows_in if r["method"] == "naive" and not r["error"]
    }
    out = []
    for r in rows_in:
        x = r["seconds"] / naive.get((r["experiment"], r["max_tokens"]), math.nan) if not r["error"] else None
        where = f"{r['experiment']}, {r['max_tokens']:,} tokens"
        why = f" ({r['error']})" if r["error"] else ""
        if r["method"] == "MarianMT":
            speed = None if x is None else 1 / x
            out.append(
                Row(
                    f"t_marian / t_naive ({where})",
                    _num(speed, "{:.2f}x") + why,
                    ">= 1.15x",
                    verdict(speed, lambda v: v >= 1.15, True, gpu),
                )
            )
        elif r["method"] == "naive" and bench and r["max_tokens"] == bench.get("mfu_tokens"):
            mfu = r["flops"] / bench["peak_flops"] if not r["error"] else None
            out.append(
                Row(
                    f"MFU of naive ({where})",
                    _num(mfu, "{:.1%}") + why,
                    ">= 40%",
                    verdict(mfu, lambda v: v >= 0.40, True, gpu),
                )
            )
        elif (limit := RATIOS.get(r["kind"])) is not None:
            out.append(
                Row(
                    f"{r['method']} / naive update time ({where})",
                    _num(x, "{:.2f}x") + why,
                    f"<= {limit:.2f}x",
                    verdict(x, functools.partial(operator.ge, limit), True, gpu),
                )
            )
    if not rows_in:
        out.append(
            Row(f"throughput, {name}", "not measured (see its step)", "each kind", verdict(None, bool, True, gpu))
        )
    return out


def rows(f: Findings) -> list[Row]:
    failed = [f"{o.name} ({o.status})" for o in f.steps if not o.ok and not o.status.startswith("stopped")]
    n_ok = sum(o.ok or o.status.startswith("stopped") for o in f.steps)
    out = [
        Row("machine", f.machine),
        Row(
            "the check's time",
            f"{f.seconds / 60:.1f} min ({f.cpu_seconds:.0f} s of CPU)",
            f"<= {f.minutes:g} min",
            verdict(f.seconds / 60, lambda v: v <= f.minutes, True, f.gpu),
        ),
        Row(
            "steps",
            f"{n_ok} ok" + (f"; not ok: {', '.join(failed)}" if failed else ""),
            "all ok",
            "met" if not failed else "not met",
        ),
        Row(
            "naive alone: updates/s",
            _num(f.alone_rate, "{:.1f}") + f" (after its first {f.first_n})",
            ">= 30",
            verdict(f.alone_rate, lambda v: v >= 30, True, f.gpu),
        ),
        Row(
            f"naive alone: its first {f.first_n} updates",
            _num(f.first, "{:.1f} s") + " (from its start line)",
            "<= 10 s",
            verdict(f.first, lambda v: v <= 10, True, f.gpu),
        ),
    ]
    c = f.together
    out.append(
        Row(
            "four trainings together on the GPU: updates/s",
            "not measured" if c is None else f"{c[0]:.1f} ({c[2]} running, over {c[1]:.0f} s)",
            ">= 80",
            verdict(None if c is None else c[0], lambda v: v >= 80, True, f.gpu),
        )
    )
    out.append(
        Row(
            "every training finishes its updates",
            "; ".join(f"{m} {t}" for m, t in f.trained.items()) or "not measured",
            "all of them",
            verdict(None if f.finished_all is None else float(f.finished_all), bool, True, f.gpu),
        )
    )
    out += ratio_rows("opus100", f.throughput.get("opus100"), f.gpu)
    out += ratio_rows("default_gpu", f.throughput.get("default_gpu"), f.gpu)
    for model, h in (f.host or {}).get("models", {}).items():
        out.append(
            Row(
                f"host cost, {model} model: trainer updates/s",
                f"{1 / h['trainer']:.1f} (bare loop "
                f"{1 / h['bare']:.1f}; {h['ops']:,.0f} ops per update, {h['kernels']:,.0f} computing; Python calls "
                f"per update {h['trainer_calls']:,.0f}, bare loop {h['bare_calls']:,.0f})",
            )
        )
    for s in f.scores:
        out.append(
            Row(
                f"{s.method}: BLEU / chrF ({s.test_set}, {s.directions} directions, {s.sentences:,} sentences)",
                f"{s.bleu:.2f} / {s.chrf:.2f}",
            )
        )
    if f.signatures:
        out.append(Row("sacreBLEU signatures", f.signatures))
    return out


def cell(text: str) -> str:
    """``text`` in a Markdown table cell (a sacreBLEU signature's ``|`` escaped)."""
    return text.replace("|", "\\|")


def table(rs: Sequence[Row]) -> str:
    lines = ["| figure | measured | target | verdict |", "| --- | --- | --- | --- |"]
    lines += [f"| {cell(r.figure)} | {cell(r.measured)} | {r.target} | {r.verdict} |" for r in rs]
    return "\n".join(lines)
