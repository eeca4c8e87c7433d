"""The protocol table: every training and evaluation setting of each paper experiment, with its source.

``PROTOCOL.md`` is generated from ``params.yaml`` (the values) and the sources (where each value comes from:
a paper section, the authors' released scripts, or "our choice" with the reason)::

    python -m lsnmt.protocol > PROTOCOL.md

It covers the translation experiments (:data:`SETTINGS` and :data:`SOURCES` here, with per-experiment
exceptions in :data:`EXPERIMENT_SOURCES`), the settings of every method they train
(:mod:`lsnmt.protocol.methods`), x-elm's ``mc4_xelm`` (:mod:`lsnmt.protocol.lm`) and the NER / QA fine-tuning
of ``xlmr_tasks`` (:mod:`lsnmt.protocol.tasks`). ``tests/test_protocol_table.py`` regenerates it and compares
with the committed file, so a setting changed in params.yaml without the table following fails the suite; every
row must have a source.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lsnmt.experiment.params import Experiment, Params
from lsnmt.methods import batching_by_kind
from lsnmt.protocol import lm, methods, tasks
from lsnmt.protocol.markdown import table
from models.presets import resolve_dims

LMSFD_SCRIPTS = "fe1ixxu/LMS_FD runs/train_opus_100.sh, train_opus_100_baseline.sh, train_opus_15.sh"


def _model(e: Experiment) -> str:
    d, m = resolve_dims(e.model), e.model
    return (f"{m.arch}: {d.encoder_layers}+{d.decoder_layers} layers, d {d.embed_dim}, FFN {d.ffn_dim}, "
            f"{d.heads} heads, {m.decoder} decoder, shared embeddings {'yes' if m.share_all_embeddings else 'no'}")


def _batch(e: Experiment) -> str:
    t = e.train
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(batching_by_kind(t).items()))
    return (f"{t.max_tokens} tokens x {t.update_freq} accumulation x {t.world_size} GPUs; {t.batching} batches "
            f"({kinds}); positions <= {t.max_source_positions}/{t.max_target_positions}")


def _sampling(e: Experiment) -> str:
    s = e.sample
    out = f"T = {s.temperature:g} over directions"
    if s.per_source.downsample:
        out += (f"; {', '.join(s.per_source.downsample)} down-sampled against the other sources at "
                f"T = {s.per_source.temperature:g}, at most {s.per_source.max_factor:g}x")
    return out + f"; drawn {'every epoch' if s.redraw == 'epoch' else 'once'}"


DIRECTION_SETS = {"en-centric": "English-centric (en-xx and xx-en)", "en-xx": "en-xx only (one-to-many)",
                  "xx-en": "xx-en only (many-to-one)", "all": "all ordered pairs",
                  "en-centric+groups": "English-centric and within each group", "none": "none"}
"""``data.train_directions`` / ``eval_directions`` in words."""


def _directions(e: Experiment) -> str:
    """Which directions the experiment trains and evaluates, and which evaluated ones are zero-shot."""
    d = e.data
    train, evals = d.train_pairs, d.eval_pairs
    zero = [f"{s}-{t}" for s, t in evals if (s, t) not in train]
    out = f"trained: {DIRECTION_SETS[d.train_directions]}, {len(train)} directions"
    if d.train_directions == "en-centric+groups":
        out += " (groups " + "; ".join(f"{g}: {' '.join(m)}" for g, m in d.groups.items()) + ")"
    out += f"; evaluated: {DIRECTION_SETS[d.eval_directions]}"
    out += f" less {' '.join(d.no_eval)} (no test data)" if d.no_eval else ""
    out += f", {len(evals)} directions; zero-shot: {len(zero) or 'none'}"
    return out + (f" ({' '.join(zero)})" if zero and len(zero) <= 6 else "")


def _cleaning(e: Experiment) -> str:
    p, r = e.prepare, e.sample.max_piece_ratio
    return (f"{p.normalization}; {'duplicates, ' if p.dedup else ''}empty and over-long pairs (> {p.max_words} "
            f"words or {p.max_chars} characters) dropped; piece-length ratio "
            + (f"<= {r:g} (SentencePiece pieces)" if r else "not filtered"))


def _checkpoint(e: Experiment) -> str:
    t = e.train
    return f"average of the last {t.average_last}" if t.final_checkpoint == "average" else t.final_checkpoint


SETTINGS: dict[str, Callable[[Experiment], str]] = {
    "model": _model,
    "norm": lambda e: "pre-norm" if e.model.normalize_before else "post-norm",
    "dropout": lambda e: (f"{e.model.dropout:g}, attention {e.model.attention_dropout:g}, "
                          f"activation {e.model.activation_dropout:g}"),
    "optimizer": lambda e: (f"Adam betas {tuple(e.train.adam_betas)}, eps {e.train.adam_eps:g}, weight decay "
                            f"{e.train.weight_decay:g}, clip {e.train.clip_norm:g}"),
    "lr schedule": lambda e: (f"inverse_sqrt, peak {e.train.lr:g}, {e.train.warmup_steps} warm-up from "
                              f"{e.train.warmup_init_lr:g}"),
    "batch": _batch,
    "steps": lambda e: f"{e.train.max_steps}",
    "precision": lambda e: e.train.precision,
    "label smoothing": lambda e: f"{e.train.label_smoothing:g}",
    "directions": _directions,
    "cleaning": _cleaning,
    "sampling": _sampling,
    "vocabulary": lambda e: f"SentencePiece {e.spm.model_type}, {e.spm.vocab_size}",
    "tags": lambda e: e.data.tags,
    "checkpoint": _checkpoint,
    "beam": lambda e: f"{e.decode.beam}",
    "length penalty": lambda e: f"{e.decode.lenpen:g}",
    "max length": lambda e: (f"{e.decode.max_len_a:g} x source + {e.decode.max_len_b}, at most "
                             f"{e.decode_positions - 1} tokens"),
    "metric": lambda e: ", ".join(e.evaluate.metrics) + (
        f" ({', '.join(f'{k}: {v}' for k, v in e.evaluate.bleu_tokenize.items())})" if e.evaluate.bleu_tokenize
        else ""),
}
"""Setting -> its value in an experiment, as the table prints it."""

FAIRSEQ_LENGTH = "not stated: fairseq-generate's defaults (the papers decode with fairseq)"
SOURCES: dict[str, dict[str, str]] = {
    "lmsfd": {
        "model": "App. A (IWSLT'14 transformer_small, OPUS-100 transformer_big), App. D (OPUS-15 transformer_base)",
        "norm": f"not in the paper: the authors' scripts ({LMSFD_SCRIPTS}); IWSLT'14 (no script): same, our choice",
        "dropout": f"App. A (0.1); attention 0.1 and relu 0: {LMSFD_SCRIPTS}",
        "optimizer": f"App. A (Adam, weight decay 0); betas, eps 1e-6, clip 0: {LMSFD_SCRIPTS}",
        "lr schedule": f"App. A (inverse_sqrt, 5e-4, 8K warm-up); warm-up from 1e-7: {LMSFD_SCRIPTS}",
        "batch": ("App. A (4096 tokens, 4x accumulation on OPUS-100, 4 GPUs, one-direction batches); Switch on "
                  "mixed batches: v1 Sec. 5 footnote 4 (v2 drops it; v1 followed); 512 positions: the scripts"),
        "steps": "App. A (150K IWSLT'14, 100K OPUS-100), App. D (50K OPUS-15)",
        "precision": f"{LMSFD_SCRIPTS} (--fp16); IWSLT'14: our choice, the same",
        "label smoothing": f"not in the paper: {LMSFD_SCRIPTS} (0.1)",
        "directions": ("Sec. 3.2 (IWSLT'14: 8 English-centric pairs, one many-to-many model), Sec. 5.2 (OPUS-100, "
                       "many-to-many; 94 pairs with development / test sets), App. D (OPUS-15, many-to-many); "
                       "every trained direction is evaluated, none zero-shot"),
        "cleaning": ("not stated (the authors release preprocessed data, fe1ixxu/LMS_FD README): our choice, "
                     "NFKC, duplicates and empty / over-long pairs out; no ratio filter (a character ratio drops "
                     "real Chinese pairs, lsnmt/data/clean.py)"),
        "sampling": ("App. A (T = 5 OPUS, T = 2 IWSLT'14); re-drawn every epoch as fairseq's "
                     "translation_multi_simple_epoch does (the scripts' task)"),
        "vocabulary": ("Sec. 5.2, App. A, D (32K / 64K SentencePiece); model type not stated: unigram, "
                       "SentencePiece's default (our choice)"),
        "tags": "App. A (target-language id before the source); the scripts' --encoder-langtok tgt",
        "checkpoint": "the scripts (checkpoint_best.pt, --best-checkpoint-metric loss)",
        "beam": "Sec. 5.2, App. A (5)",
        "length penalty": "Sec. 5.2, App. A (1)",
        "max length": FAIRSEQ_LENGTH + " (the scripts set none)",
        "metric": "Sec. 3.2, 5.2 (sacreBLEU, FLORES-200 tokenizer); the scripts' sacrebleu -tok flores200",
    },
    "clm": {
        "model": "App. B (Transformer-Base, share-all-embeddings); Sec. 4.2 (baselines' sizes)",
        "norm": "not stated: fairseq's transformer default, post-norm (our choice)",
        "dropout": "App. B (0.1); attention / activation dropout not stated: fairseq's defaults, 0 (our choice)",
        "optimizer": ("App. B (Adam, betas 0.9 / 0.98); eps, weight decay, clipping not stated: fairseq's "
                      "defaults (our choice)"),
        "lr schedule": ("App. B (Vaswani et al.'s schedule, peak 5e-4, 4000 warm-up); start not stated: fairseq's "
                        "inverse_sqrt default, 0"),
        "batch": "App. B (4096 tokens, update_freq 4, 4 GPUs, sequences <= 100); one-direction batches: our choice",
        "steps": "App. B (120K)",
        "precision": "not stated: fp16 (our choice, fairseq recipes of the time)",
        "label smoothing": "App. B (0.1)",
        "directions": ("Sec. 4.1, 4.3, App. A.1, B and the captions of Tables 1, 2, 9 (separate en-xx and xx-en "
                       "models on OPUS-100 and WMT-14: _enxx / _xxen; OPUS-100's 94 pairs with valid / test sets); "
                       "zero-shot: Sec. 4.1, 5.3, App. A.1 (IWSLT-17: En <-> It, Nl, Ro trained, the 6 directions "
                       "between It, Nl, Ro zero-shot)"),
        "cleaning": ("not stated (OPUS-100 as released, App. A.1; WMT-14 capped at 10M pairs): our choice, NFKC, "
                     "duplicates and empty / over-long pairs out; no ratio filter"),
        "sampling": "App. B (T = 5); re-drawn every epoch as fairseq does",
        "vocabulary": "Sec. 4.1 (SentencePiece BPE, 64K OPUS-100 / WMT, 32K IWSLT-17)",
        "tags": ("App. B (target-language token on the source; on the separate xx-en models, _xxen, it denotes the "
                 "source language, following Zhang et al. 2021)"),
        "checkpoint": "App. B (average of the last 5 checkpoints)",
        "beam": "App. B (4)",
        "length penalty": "App. B (1.0)",
        "max length": (FAIRSEQ_LENGTH + "; at most 99 tokens: App. B's training sequences of at most 100 tokens "
                       "read as fairseq's --max-target-positions 100, whose generator stops at positions - 1"),
        "metric": "Sec. 4.3 (detokenised case-sensitive sacreBLEU, 13a)",
    },
    "lsl": {
        "model": "Sec. 4.1 (16+3 layers, 512 / 2048, 8 heads, shared embeddings); Sec. 4.2, 4.4 (decoders)",
        "norm": "not stated: fairseq's transformer default, post-norm (our choice)",
        "dropout": "Sec. 4.1 (\"we do not use any regularization\")",
        "optimizer": "Sec. 4.1 (Adam, no weight decay); betas, eps, clipping not stated: fairseq's defaults",
        "lr schedule": ("Sec. 4.1 (inverse square root, 4e-4, 4000 warm-up); start not stated: fairseq's "
                        "inverse_sqrt default, 0"),
        "batch": "not stated: 4096 tokens on each of 8 GPUs, one-direction batches (our choice)",
        "steps": "Sec. 4.1 (150K)",
        "precision": "Sec. 4.1 (fp16)",
        "label smoothing": "Sec. 4.1 (no regularisation: 0)",
        "directions": ("Sec. 4.1, App. B (10 languages, all 90 directions; Sec. 4.5: \"we used training data for all "
                       "language directions\"); zero-shot: Sec. 4.5, footnote 8 (English-centric and within-group "
                       "training, groups European, CJK, Swahili; the directions between groups are zero-shot)"),
        "cleaning": ("Sec. 4 (deduplicated; \"preprocess it using the M2M-100 scripts\": their length-ratio "
                     "cleaning, clean-corpus-n --ratio 3 over SentencePiece pieces, fairseq examples/m2m_100); "
                     "their punctuation, evaluation-overlap and histogram filters are not run"),
        "sampling": ("App. B (T = 5 between data sources, CCMatrix down-sampled, at most 10x; a one-off "
                     "down-sampling, drawn once: Table 7 counts the pairs after it); between directions not "
                     "stated: natural proportions, T = 1 (our assumption)"),
        "vocabulary": "Sec. 4 (SentencePiece 250K); model type not stated: unigram, SentencePiece's default",
        "tags": "Sec. 4 (\"Tagging\": source and target language tags, corpus tags <HQ> / <LQ>)",
        "checkpoint": "not stated: best validation loss (our choice)",
        "beam": "not stated: 5, fairseq-generate's default",
        "length penalty": "not stated: 1, fairseq-generate's default",
        "max length": FAIRSEQ_LENGTH,
        "metric": "Sec. 4 (chrF and spBLEU with the Flores-101 tokenizer)",
    },
}
"""Paper -> setting -> where its value comes from (the same for every experiment of the paper)."""

EXPERIMENT_SOURCES: dict[tuple[str, str], str] = {
    ("opus15", "batch"): ("App. D (4096 tokens; \"the other settings are the same as Appendix A\": 4 GPUs, "
                          "one-direction batches); 1 accumulation step, not App. A's 4 (OPUS-100): "
                          "runs/train_opus_15.sh (FREQ=1); Switch on mixed batches: v1 Sec. 5 footnote 4; 512 "
                          "positions: the script"),
}
"""(experiment, setting) -> its source where it differs from the paper's (:data:`SOURCES`)."""

PAPER_MT = {"lmsfd": ("iwslt14", "opus100", "opus15"),
            "clm": ("opus100_clm_enxx", "opus100_clm_xxen", "wmt14_enxx", "wmt14_xxen", "iwslt17_zeroshot"),
            "lsl": ("flores10_lsl", "flores10_lsl_zeroshot")}
"""The translation experiments of each paper (``papers`` less x-elm's and the XLM-R tasks)."""


def rows(params: Params) -> list[tuple[str, str, str, str, str]]:
    """``(paper, experiment, setting, value, source)`` for every setting of every paper MT experiment."""
    out = []
    for paper, names in PAPER_MT.items():
        for name in names:
            exp = params.get(name)
            for setting, value in SETTINGS.items():
                source = EXPERIMENT_SOURCES.get((name, setting), SOURCES[paper].get(setting, ""))
                out.append((paper, name, setting, value(exp), source))
    return out


def render(params: Params) -> str:
    """PROTOCOL.md: per translation experiment its settings and its methods' settings, then x-elm, then NER / QA."""
    lines = ["# Protocols of the paper experiments", "",
             "Generated from params.yaml by `python -m lsnmt.protocol > PROTOCOL.md` (lsnmt/protocol/ holds the "
             "sources); tests/test_protocol_table.py fails when the two differ. \"Our choice\" marks a setting "
             "the paper and the authors' scripts leave open."]
    by_exp: dict[str, list[tuple[str, str, str]]] = {}
    for paper, name, setting, value, source in rows(params):
        by_exp.setdefault(f"{name} ({paper})", []).append((setting, value, source))
    for title, body in by_exp.items():
        name, paper = title.split(" (")[0], title.split(" (")[1].rstrip(")")
        lines += ["", f"## {title}", "", *table(("setting", "value", "source"), body)]
        lines += ["", f"Methods of `{name}` (method_cfg, the ones its `methods` train):", "",
                  *table(("method", "kind", "settings", "source"), methods.rows(params.get(name), paper))]
    lines += lm.section(params)
    lines += tasks.section(params)
    return "\n".join(lines) + "\n"


def main() -> None:
    print(render(Params.load(Path(__file__).resolve().parents[2] / "params.yaml")), end="")
