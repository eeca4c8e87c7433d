"""The ``search`` stage: LSL's architecture search (Pires et al. 2023, Sec. 3.2, Figure 3).

For every search ``name`` of ``experiments.<exp>.search`` and every one of its seeds, a model whose encoder
layers mix a shared layer and a source- / target-indexed LSL (Eq. 1, ``models.ls.lsl.SearchLayer``) is
trained like any method (``lsnmt.train.trainer``: resumable, in ``work/{exp}/search/{name}/seed{s}``). The
softmax mixing weights of the trained model (``train.final_checkpoint``) are averaged over seeds and each
layer takes the component with the largest mean weight. Outputs, in ``results/{exp}/search``::

    index.json                  every search: its selected layout in the paper's notation
    {name}/weights.tsv          layer, seed (or mean / std), w_shared, w_src, w_tgt   (Figure 3's data)
    {name}/architecture.json    {"layers": [shared|src|tgt, ...], "src": [...], "tgt": [...], weights, config}
    {name}/figure3.png          mean weight per layer, shaded +- one standard deviation over seeds
    {name}/curve-seed{s}.tsv    training curve of each run

An LSL method with ``architecture: {name}`` (LSL-NAS) reads ``architecture.json`` and trains the selected
layout from scratch (``lsnmt.methods.bind``). An experiment without searches gets an ``index.json`` of ``{}``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch

from lsnmt.figures import save_png
from lsnmt.io import atomic_dir, atomic_write, write_json
from lsnmt.methods.schema import searches
from lsnmt.train import checkpoint as ckpt
from lsnmt.train.trainer import Training, train
from lsnmt.typed import to_dict
from models.build import build_transformer
from models.config.lsl import model
from models.ls.lsl import LSLConfig, layers_to_config, mixing_weights, search_factories, select

log = logging.getLogger(__name__)

T = TypeVar("T", bound=Training)


def search_experiment(spec: T, cfg: Any, seed: int) -> T:
    """``spec`` (what the search stage trains: :class:`lsnmt.train.trainer.Training`) as one search run trains it:
    the search's shape, seed and length."""
    steps = cfg.max_steps if cfg.max_steps is not None else spec.train.max_steps
    return dataclasses.replace(spec, model=model(cfg, spec.model),
                               train=dataclasses.replace(spec.train, seed=seed, max_steps=steps))


def run_dir(work: Path, name: str, seed: int) -> Path:
    return work / name / f"seed{seed}"


def train_runs(spec: Training, name: str, cfg: Any, bin_dir: Path, work: Path) -> dict[int, torch.Tensor]:
    """Train (or finish) every seed of search ``name``; ``{seed: (layers, 3) mixing weights}``."""

    factory = functools.partial(build_transformer, factories=search_factories(cfg))
    # what fixes a run's weights besides spec.model / spec.train: more seeds or more steps resume the runs done
    model_cfg = {k: v for k, v in to_dict(cfg).items() if k not in ("seeds", "max_steps")}
    out: dict[int, torch.Tensor] = {}
    for seed in cfg.seeds:
        root = run_dir(work, name, seed)
        log.info("search %s: run with seed %d (%s)", name, seed, root)
        train(search_experiment(spec, cfg, seed), bin_dir, root / "out", root / "ckpt", model_factory=factory,
              method={"name": name, "kind": "lsl_search", "cfg": model_cfg})
        out[seed] = mixing_weights(ckpt.load(root / "out" / "model.pt")["model"])
    return out


def summarise(name: str, cfg: Any, runs: Mapping[int, torch.Tensor]) -> dict[str, Any]:
    """Mean and standard deviation over seeds, the argmax layout and its notation (``architecture.json``)."""

    stacked = torch.stack([runs[s] for s in sorted(runs)])  # (seeds, layers, 3)
    mean, std = stacked.mean(0), stacked.std(0, unbiased=False)
    layers = select(mean)
    src, tgt = layers_to_config(layers)
    return {"search": name, "layers": layers, "src": list(src), "tgt": list(tgt),
            "notation": LSLConfig(src=src, tgt=tgt).describe(), "seeds": sorted(runs),
            "mean": mean.tolist(), "std": std.tolist(),
            "per_seed": {str(s): runs[s].tolist() for s in sorted(runs)}, "config": to_dict(cfg)}


def weights_tsv(arch: Mapping[str, Any]) -> str:
    """Figure 3's data: one row per layer and seed, then the mean and standard deviation rows."""
    lines = ["layer\trun\tw_shared\tw_src\tw_tgt"]
    rows = [*((f"seed{s}", arch["per_seed"][str(s)]) for s in arch["seeds"]), ("mean", arch["mean"]),
            ("std", arch["std"])]
    for i in range(len(arch["layers"])):
        lines += [f"{i + 1}\t{run}\t" + "\t".join(f"{w:.6f}" for w in weights[i]) for run, weights in rows]
    return "\n".join(lines) + "\n"


def draw(arch: Mapping[str, Any], path: Path) -> None:
    """Figure 3: mean mixing weight per layer (1 = bottom), +- one standard deviation over seeds."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure


    mean, std = torch.tensor(arch["mean"]), torch.tensor(arch["std"])
    x = list(range(1, mean.size(0) + 1))
    fig = Figure(figsize=(6, 3.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for j, label in enumerate(("shared", "source", "target")):
        ax.plot(x, mean[:, j].tolist(), marker="o", label=label)
        ax.fill_between(x, (mean[:, j] - std[:, j]).tolist(), (mean[:, j] + std[:, j]).tolist(), alpha=0.2)
    ax.set_xlabel("encoder layer")
    ax.set_ylabel("mixing weight")
    ax.set_xticks(x)
    ax.set_title(f"{arch['search']}: {arch['notation']} ({len(arch['seeds'])} run(s))", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_png(fig, path)


def run_search(spec: Training, search: Mapping[str, Any], exp_name: str, bin_dir: Path, out: Path,
               work: Path) -> dict[str, Any]:
    """Every search of the ``search`` section of experiment ``exp_name``, each a training of ``spec`` (``data``,
    ``model``, ``train``): train, read the weights, select; write ``out`` atomically. Returns the index."""
    configs = searches(search, f"experiments.{exp_name}.search")
    results = {name: summarise(name, cfg, train_runs(spec, name, cfg, bin_dir, work))
               for name, cfg in configs.items()}
    index = {name: {"notation": a["notation"], "layers": a["layers"], "seeds": a["seeds"]}
             for name, a in results.items()}
    with atomic_dir(out) as tmp:
        for name, arch in results.items():
            write_json(tmp / name / "architecture.json", arch)
            with atomic_write(tmp / name / "weights.tsv") as fh:
                fh.write(weights_tsv(arch))
            draw(arch, tmp / name / "figure3.png")
            for seed in arch["seeds"]:
                curve = run_dir(work, name, seed) / "out" / "curve.tsv"
                with atomic_write(tmp / name / f"curve-seed{seed}.tsv") as fh:
                    fh.write(curve.read_text(encoding="utf-8"))
            log.info("search %s: %s (mean weights over seeds %s)", name, arch["notation"], arch["seeds"])
        write_json(tmp / "index.json", index)
    if not configs:
        log.info("experiment %s defines no search (experiments.%s.search is empty)", exp_name, exp_name)
    return json.loads(json.dumps(index))
