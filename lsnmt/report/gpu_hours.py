"""Rough GPU-hours of training the params.yaml experiments (the table of docs/experiments.md).

    python -m lsnmt.report.gpu_hours [--tflops 30]      # prints the Markdown table

Each method of an experiment (:meth:`lsnmt.experiment.params.Params.methods_of`) trains once (FD and LMS+FD too: their
Share and LS systems are one model decoded through two routes, ``lsnmt/methods.py``) with

    FLOPs = 6 * A * B * S * c

- ``A``: parameters a training token passes through: :func:`models.param_count.inference_params` of the model
  the pipeline builds (the experiment's languages and vocabulary), direction pivot -> first other language.
  A Switch layer routes a token to one expert, so Switch counts as its dense twin (the router is negligible;
  the kind's trait ``dense_equivalent``, ``models/config/kinds.py``).
- ``B``: tokens per update on each side, ``max_tokens * update_freq * gpus_per_node * nodes`` (padding
  included: the GPU computes it). ``S``: updates (``max_steps``).
- ``6``: forward (2) and backward (4) FLOPs per parameter and token (Kaplan et al., 2020); attention over
  positions is left out (a few % at sentence lengths).
- ``c``: forward-backward passes per update, the kind's trait ``passes``: 2 for Fuse Distillation's two-pass
  criterion (``fd``, ``lms_fd``), else 1.

LSL: a token passes through one language's copy of each language-specific layer, so ``A`` does not depend on
the layout, and a method that trains a search's layout (``architecture: <search>``) is counted before the search
has run. Dense pre-training (``dense_steps``, LSL Sec. 3.3) adds ``6 * A * B * dense_steps``. Each run of an
architecture search (``search:``, one per seed) computes the shared, source and target path of every encoder
layer: ``6 * (A + 2 * E) * B * S_search``, ``E`` the parameters of the encoder's layers.

GPU-hours = FLOPs / (3600 * F), with ``F`` the sustained throughput of one GPU: 30 TFLOP/s by default, about
10% of an A100's 312 TFLOP/s fp16/bf16 peak; sentence-level NMT models of 50-250M parameters with padded
4096-token batches keep a GPU far from busy (per-step overheads weigh heavily on the small ones). This is an
assumption, not a measurement: none of the papers reports its training time (they train on 4 RTX 6000 /
RTX A6000 GPUs, LMS-FD App. A and CLM App. B). Change it with ``--tflops``. Translation and evaluation are
left out (beam search over the test sets is small beside training).

x-elm has no translation model in params.yaml: its row counts the paper's own budget (Table 4: experts of
XGLM-1.7B trained on 10.5B and 21.0B tokens in each of the settings k = 1, 4, 8, 16), 6 * 1.7e9 * tokens,
without the adaptation rounds to new languages, at three times ``F`` (a 1.7B decoder on 2048-token sequences
uses a GPU about three times better than an NMT model does; also an assumption).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

import torch

from lsnmt.experiment.params import Experiment, Params
from lsnmt.methods import resolve
from lsnmt.methods.schema import searches
from models.build import build_transformer
from models.config.kinds import KINDS, dense_steps, passes, with_layout
from models.config.lsl import model
from models.meta import meta_device
from models.param_count import inference_params

TFLOPS = 30.0
"""Default sustained TFLOP/s per GPU (A100-class, ~10% of its fp16/bf16 peak; an assumption)."""
XELM_TOKENS = 4 * (10.5e9 + 21.0e9)
"""x-elm Table 4: the 10.5B and 21.0B-token budgets, each for k = 1, 4, 8 and 16 experts."""
XELM_PARAMS = 1.7e9
XELM_SPEEDUP = 3.0
"""x-elm's sustained throughput relative to ``F`` (module docstring)."""


@dataclass(frozen=True)
class Cost:
    experiment: str
    methods: int
    gpus_per_job: int
    gpu_hours: float
    """All methods together."""


def _model(exp: Experiment, kind: str | None, cfg: object) -> torch.nn.Module:
    with meta_device():
        return build_transformer(exp.model, vocab_size=exp.spm.vocab_size, num_languages=len(exp.data.languages),
                                 method=kind, method_cfg=cfg)


def active_params(exp: Experiment, method: str) -> int:
    """``A`` of the module docstring: parameters used for one direction (Switch: its dense twin)."""
    kind, cfg = resolve(exp.method_cfg, method)
    if kind is not None and KINDS[kind].dense_equivalent:
        kind, cfg = None, None
    cfg = with_layout(kind, cfg)  # a searched layout does not change A (module docstring)
    return inference_params(_model(exp, kind, cfg), 0, 1)


def _tokens(exp: Experiment) -> int:
    t = exp.train
    return t.max_tokens * t.update_freq * t.world_size


def train_flops(exp: Experiment, method: str) -> float:
    kind, cfg = resolve(exp.method_cfg, method)
    steps = exp.train.max_steps * passes(kind) + dense_steps(kind, cfg)
    return 6.0 * active_params(exp, method) * _tokens(exp) * steps


def search_flops(exp: Experiment) -> float:
    """Every run of every architecture search of ``exp`` (module docstring)."""
    total = 0.0
    for cfg in searches(exp.search, f"experiments.{exp.name}.search").values():
        shape = dataclasses.replace(exp, model=model(cfg, exp.model))
        net = _model(shape, None, None)
        a = inference_params(net, 0, 1)
        e = sum(p.numel() for p in net.encoder.layers.parameters())
        steps = cfg.max_steps if cfg.max_steps is not None else exp.train.max_steps
        total += len(cfg.seeds) * 6.0 * (a + 2 * e) * _tokens(exp) * steps
    return total


def estimate(params: Params, name: str, tflops: float = TFLOPS) -> Cost:
    exp = params.get(name)
    methods = params.methods_of(name)
    flops = sum(train_flops(exp, m) for m in methods) + search_flops(exp)
    return Cost(name, len(methods), exp.train.world_size, flops / (3600 * tflops * 1e12))


def xelm_gpu_hours(tflops: float = TFLOPS) -> float:
    return 6.0 * XELM_PARAMS * XELM_TOKENS / (3600 * XELM_SPEEDUP * tflops * 1e12)


def table(params: Params, tflops: float = TFLOPS) -> str:
    """docs/experiments.md's Markdown table: paper, experiment, methods, GPUs per training job, GPU-hours."""
    rows = ["| paper | experiment | methods | GPUs per job | GPU-hours (est.) |", "| --- | --- | --- | --- | --- |"]
    for paper, names in params.papers.items():
        for name in names:
            if name == "mc4_xelm":
                rows.append(f"| {paper} | {name} | paper budget (Table 4) | 2-8 | {xelm_gpu_hours(tflops):,.0f} |")
                continue
            if not params.methods_of(name):  # NER / QA fine-tuning only
                tasks = params.jobs_of(name, "tasks")
                rows.append(f"| {paper} | {name} | {len(tasks)} tasks x {len(params.jobs_of(name, 'task_methods'))} "
                            "methods (XLM-R fine-tuning) | 1 | not estimated (depends on the datasets' sizes) |")
                continue
            c = estimate(params, name, tflops)
            rows.append(f"| {paper} | {name} | {c.methods} | {c.gpus_per_job} | {c.gpu_hours:,.0f} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lsnmt.report.gpu_hours", description=__doc__.split("\n")[0])
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--tflops", type=float, default=TFLOPS, help="sustained TFLOP/s per GPU (default 30)")
    args = parser.parse_args(argv)
    print(table(Params.load(args.params), args.tflops))


if __name__ == "__main__":
    main()
