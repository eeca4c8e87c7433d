"""x-elm's protocol (``mc4_xelm``): data, the seed, the experts' budget and optimizer, clustering, ensembles, HMR,
in-context evaluation, each value with its source (x-elm = Blevins et al. 2024; "released": blvns/x-elm)."""

from __future__ import annotations

from collections.abc import Callable

from lsnmt.experiment.params import Experiment, Params
from lsnmt.protocol.markdown import table
from lsnmt.xelm.config import LMTrainConfig, XelmConfig
from lsnmt.xelm.data_config import LMDataConfig

EXPERIMENTS = ("mc4_xelm",)
"""The x-elm experiments of the papers (``papers.xelm``)."""

SWEEP = "released: blvns/x-elm metaseq/fb_sweep/ft_stream.py as metaseq/scripts/train_xlbtm.sh runs it"


def _optimizer(t: LMTrainConfig) -> str:
    return (f"Adam betas {tuple(t.adam_betas)}, eps {t.adam_eps:g}, weight decay {t.weight_decay:g}, clip "
            f"{t.clip_norm:g}, {t.precision}" + (f" (loss scale from {t.fp16_init_scale:g})"
                                                if t.precision == "fp16" else ""))


def _budget(t: LMTrainConfig) -> str:
    return (f"{t.updates:,} updates of {t.batch_tokens:,} tokens ({t.updates * t.batch_tokens / 1e9:.1f}B), "
            f"lr {t.lr:g} {t.schedule}, {t.warmup_updates} warm-up")


def _lm(e: Experiment) -> LMDataConfig:
    if e.lm_data is None:
        raise ValueError(f"experiment {e.name!r} has no lm_data section")
    return e.lm_data


def _data(e: Experiment, x: XelmConfig) -> str:
    caps = [f"{lang} {n}" for s in e.data.sources for lang, n in s.shards.items()]
    seen = _lm(e).seen(e.data.languages)
    return (f"mC4, {len(seen)} pretraining languages ({' '.join(seen)}), first shards: {', '.join(caps) or 'all'}; "
            f"{_lm(e).valid_docs} validation documents per language")


SETTINGS: dict[str, tuple[Callable[[Experiment, XelmConfig], str], str]] = {
    "data": (_data, "Sec. 5.1, Table 5 (the 16 highest-resourced XGLM languages; en es fr ru capped at 1,024 "
             "shards), Sec. 5.4 (perplexity on 5,000 validation documents)"),
    "model": (lambda e, x: (f"decoder-only, {x.lm.layers} layers, d {x.lm.embed_dim}, FFN {x.lm.ffn_dim}, "
                            f"{x.lm.heads} heads, {x.lm.activation}, {x.lm.block_size}-token blocks"),
              "Sec. 5.2 (XGLM-1.7B's architecture), App. A.1 (sequence length 2048)"),
    "seed": (lambda e, x: (f"{_lm(e).init}: {_lm(e).pretrained}" if _lm(e).init == "xglm" else
                           f"scratch, {_budget(x.seed)}"),
             "Sec. 3.1, 5.2 (every expert branches from XGLM-1.7B's weights and keeps its tokenizer)"),
    "experts": (lambda e, x: f"k in {list(x.experts.k)} (main k = {x.experts.main_k}); {_budget(x.experts)}",
                "Fig. 3 (k = 4, 8, 16; k = 1 the dense model), Sec. 6.1 (k = 8), Table 4 (10.5B-token budget: "
                "20,000 updates; each of k experts gets 1/k of the tokens), App. A.1 (linear decay from 1.5e-4); "
                "warm-up: train_xlbtm.sh's --warmup-update 0"),
    "optimizer": (lambda e, x: _optimizer(x.experts),
                  f"not printed (Sec. 5.2: XGLM's training parameters unless stated): {SWEEP} (--adam-betas "
                  "(0.9, 0.95), --adam-eps 1e-6, no --weight-decay, --clip-norm 1.0, --fp16, --fp16-init-scale "
                  "128)"),
    "tfidf": (lambda e, x: (f"{x.tfidf.max_features:,} features, SVD {x.tfidf.svd_dim}, fitted on "
                            f"{x.tfidf.fit_docs:,} documents, {x.tfidf.iterations} iterations, {x.tfidf.assign} "
                            f"assignment in chunks of {x.tfidf.assign_chunk:,}"),
              "Sec. 3.2 (balanced TF-IDF k-means of c-BTM, Gururangan et al. 2023: 100-dim SVD, 20 iterations, "
              "balanced batches); stop words: spaCy's in the release, none here (no spaCy dependency)"),
    "typology": (lambda e, x: (f"lang2vec {x.typology.feature_set}{', minimal' if x.typology.minimal else ''}, "
                               f"{x.typology.linkage} linkage"),
                 "Sec. 3.2, Fig. 2; released xl-btm/lang_clustering.py (syntax_average, minimal, minimum distance: "
                 "its k = 4 sets are those xl-btm/cluster_dists.py records for the trained experts)"),
    "ensemble": (lambda e, x: f"T = {x.ensemble.temperature:g}, top-m {list(x.ensemble.top_m)}",
                 "Sec. 3.3 (c-BTM's weights), Table 8 (m = 2, 4 of 8)"),
    "hmr": (lambda e, x: (f"targets {' '.join(_lm(e).targets)}, donors "
                          f"{', '.join(f'{t}<-{d}' for t, d in x.hmr.donors.items())}; {_budget(x.hmr)}"),
            "Sec. 6.3, Table 2 (az he pl sv and their donors); budget not stated: one 10.5B-token budget (our "
            "choice); optimizer as the experts'"),
    "icl": (lambda e, x: (f"{', '.join(x.icl.tasks)}; {x.icl.shots} English shots, {x.icl.runs} runs, "
                          f"{x.icl.examples} examples per language"),
            "Sec. 7.1, App. A.2 (XGLM's prompts and scoring; 8 English demonstrations, 5 runs, 1,000 examples)"),
}
"""Setting -> (its value in an experiment, its source)."""


def rows(e: Experiment) -> list[tuple[str, str, str]]:
    x = e.xelm
    if x is None:
        raise ValueError(f"experiment {e.name!r} has no xelm section")
    return [(name, value(e, x), source) for name, (value, source) in SETTINGS.items()]


def section(params: Params) -> list[str]:
    """The x-elm tables of PROTOCOL.md."""
    out = []
    for name in (n for n in EXPERIMENTS if n in params.experiments):
        out += ["", f"## {name} (xelm)", "", *table(("setting", "value", "source"), rows(params.get(name)))]
    return out
