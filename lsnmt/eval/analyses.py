"""The model-based parts of the evaluation: similarity search, t-SNE figures, parameter counts and, for
every CLM method (kind ``clm``), the feature-proportion analysis (``lsnmt/eval/atp.py``).

Each system's trained model is read from ``{results_dir}/train/{method}/model.pt``
(:func:`lsnmt.decode.translate.load_model`, through the system's route: ``lsnmt.methods.System``) and put on
the GPU when there is one. A CLM top-w sweep point (``<method>_w<w>``, CLM Figure 4) gets its parameter counts
only: the paper reports BLEU alone for it (Sec. 5.4), and its method's own system has the analyses.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import load_model
from lsnmt.eval.atp import atp_analysis
from lsnmt.eval.config import EvaluateView
from lsnmt.eval.cost import parameter_counts
from lsnmt.eval.similarity import multiway_embeddings, similarity_search
from lsnmt.eval.tsne import plot_tsne
from lsnmt.io import DataError
from lsnmt.methods import System, resolve
from models.config import kinds

log = logging.getLogger(__name__)


def model_path(results_dir: Path, method: str) -> Path:
    return results_dir / "train" / method / "model.pt"


def load(spec: EvaluateView, exp_name: str, system: System, results_dir: Path, vocab: Vocab) -> torch.nn.Module:
    """The trained model of ``system`` (its method's, through its route) in eval mode, on the GPU if there is one."""
    path = model_path(results_dir, system.method)
    if not path.is_file():
        raise DataError(f"{path}: trained model not found (run the train stage first)")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return load_model(system.method, path, vocab, exp=exp_name, model=spec.model, positions=spec.decode_positions,
                      method_cfg=spec.method_cfg, route=system.route, top_w=system.top_w).to(device).eval()


def needs_models(spec: EvaluateView) -> bool:
    return bool(spec.evaluate.similarity_sets or spec.evaluate.tsne_sets)


def method_analyses(spec: EvaluateView, model: torch.nn.Module, method: str, prepared_dir: Path, spm_dir: Path,
                    vocab: Vocab, groups: Mapping[str, str], out_dir: Path) -> dict[str, Any]:
    """Similarity search on ``evaluate.similarity_sets`` and t-SNE figures of ``evaluate.tsne_sets`` for one model."""
    cfg, pivot = spec.evaluate, spec.data.pivot
    result: dict[str, Any] = {"similarity": {}, "figures": []}
    for corpus in dict.fromkeys(cfg.similarity_sets + cfg.tsne_sets):
        emb = multiway_embeddings(spec, model, corpus, prepared_dir, spm_dir, vocab)
        if corpus in cfg.similarity_sets:
            result["similarity"][corpus] = similarity_search(emb, pivot)
            log.info("similarity %s %s: all %.1f%%", method, corpus, result["similarity"][corpus]["all"])
        if corpus in cfg.tsne_sets:
            rel = Path("figures") / f"tsne-{method}-{corpus}.png"
            plot_tsne({k: v for k, v in emb.items() if k != pivot}, groups, out_dir / rel,
                      title=f"{method}, {corpus}", seed=cfg.seed, perplexity=cfg.tsne_perplexity)
            result["figures"].append(rel.as_posix())
    return result


def analyses(spec: EvaluateView, exp_name: str, systems: Sequence[System], results_dir: Path, prepared_dir: Path,
             spm_dir: Path, bin_dir: Path, groups: Mapping[str, str], out_dir: Path) -> dict[str, Any]:
    """``{"similarity": {system: {corpus: …}}, "figures": [...], "cost": {system: …}, "atp": {clm system: …}}``.

    Parameter counts are given for every system whose model exists; similarity and t-SNE, when
    configured, require every model.
    """
    vocab = Vocab.load(bin_dir)
    pairs = [(vocab.lang_id(s), vocab.lang_id(t)) for s, t in spec.data.eval_pairs]
    out: dict[str, Any] = {"similarity": {}, "figures": [], "cost": {}, "atp": {}}
    en_xx = tuple(p for p in spec.data.eval_pairs if p[0] == spec.data.pivot and p in spec.data.train_pairs)
    for system in systems:
        method = system.name
        if not model_path(results_dir, system.method).is_file() and not needs_models(spec):
            out["cost"][method] = {"note": f"{model_path(results_dir, system.method)} not found: no parameter counts"}
            log.warning("evaluate: %s", out["cost"][method]["note"])
            continue
        model = load(spec, exp_name, system, results_dir, vocab)
        out["cost"][method] = parameter_counts(model, pairs)
        if system.top_w is not None:  # a sparsity sweep point: BLEU only (module docstring)
            continue
        part = method_analyses(spec, model, method, prepared_dir, spm_dir, vocab, groups, out_dir)
        if part["similarity"]:
            out["similarity"][method] = part["similarity"]
        out["figures"] += part["figures"]
        if kinds.atp(resolve(spec.method_cfg, system.method)[0]) and en_xx:  # CLM Sec. 5.1: ATP, top-5
            out["atp"][method] = atp_analysis(model, load_split(bin_dir, "test", en_xx, vocab), vocab,
                                              spec.data.pivot, spec.decode.max_sentences)
    return out
