"""The ``translate`` stage: beam search over every direction of every test set, detokenised hypotheses per
direction.

Sources come from the encoded test shards (``bin/{test set}/{src}-{tgt}.src``, tags
included), collated as in training (``x_1 … x_m EOS``, right-padded) in
batches of at most ``decode.max_tokens`` source tokens, longest first.
Hypotheses are decoded with ``decode.beam``, ``decode.lenpen`` and a maximum
length of ``max_len_a * |x| + max_len_b``, detokenised with the experiment's
sentencepiece model, and written in the test set's order, one file per
direction: ``{out}/{src}-{tgt}.hyp`` for the primary test set ``test``, ``{out}/{test set}/{src}-{tgt}.hyp``
for each other one of ``data.test_sets`` (``test.tatoeba``, held out of the training corpus;
``lsnmt.data.layout``). Every test set decodes the first ``decode.max_sentences`` sentences of a direction.

Length check (issue 18 item 3; the papers decode with fairseq's ``max_len_a 0``, ``max_len_b 200``): a hypothesis
that stopped at its length limit instead of at its own EOS was probably cut. The limit is also capped at the model's
decoder positions - 1, as fairseq caps it (``max_len <= max_decoder_positions - 1``). fairseq's one
``--max-target-positions`` is both the training length filter and those positions; here they are
``train.max_target_positions`` and ``model.max_positions``, so the cap is the smaller of the two, minus 1 (CLM
App. B limits sequences to 100: at most 99 generated tokens, as the authors' fairseq would). Each folder of
hypotheses gets ``{out}/[{test set}/]length_limit.json``, ``{"max_len_a", "max_len_b", "at_limit": {direction:
count}}``, which the evaluate stage copies into every score JSON; a count above 0 is logged as a warning here and
there.

A method with two routes (FD, LMS+FD; ``lsnmt.methods.systems``) is decoded through each from the same
``model.pt``: its configured route into ``{out}``, the other into ``{out}/{route}`` (:func:`translate_method`),
each with its test set subfolders (``{out}/{route}/test.tatoeba/…``). A CLM method with a top-w sweep
(``sweep_top_w``, CLM Figure 4) is decoded once more per ``w`` into ``{out}/w{w}``, from the same weights.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import sentencepiece as spm
import torch

from lsnmt.data.corpus import Direction, Vocab, load_split
from lsnmt.data.layout import test_set_subdir
from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import max_lengths
from lsnmt.decode.config import DecodeConfig, TranslateView
from lsnmt.io import atomic_dir, write_json
from lsnmt.methods import bind, resolve, systems, with_route, with_top_w
from lsnmt.runner.progress import progress
from lsnmt.train import checkpoint as ckpt
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext

log = logging.getLogger(__name__)

LENGTH_LIMIT = "length_limit.json"
"""Per folder of hypotheses: how many of each direction's stopped at the length limit (module docstring)."""
MOSTLY_CUT = 0.5
"""At least this share of hypotheses at the limit: the model seldom ends a sentence (:func:`length_advice`)."""


def length_advice(cut: int, total: int, max_steps: int) -> str:
    """What ``cut`` of ``total`` hypotheses at the length limit mean. Most of them: a model that seldom emits EOS
    yet, as one trained ``max_steps`` updates at CPU scale is (the default's 200), so the cut is expected and a
    longer limit would only lengthen its output; a few: the limit is tight for real sentences."""
    if total and cut / total >= MOSTLY_CUT:
        return (f"expected of a model that seldom ends a sentence yet ({max_steps} updates): not a setting to raise "
                "(more training is)")
    return "probably cut: raise decode.max_len_b or train.max_target_positions"


def load_model(method: str, model_path: Path, vocab: Vocab, *, exp: str, model: ModelConfig, positions: int,
               method_cfg: Mapping[str, Any], route: str | None = None, top_w: int | None = None) -> torch.nn.Module:
    """The trained model of ``model.pt`` (weights chosen by ``train.final_checkpoint`` at the end of training):
    method ``method`` of experiment ``exp`` (its entry in ``method_cfg``), of shape ``model``, its hypotheses capped
    at ``positions`` (``decode_positions``: module docstring).

    The method's config comes from params.yaml (it fixes e.g. FD's inference route; ``route`` reads the same
    weights through another one, ``top_w`` mixes only a CLM model's ``w`` largest feature proportions); a layout
    that a search selected (LSL-NAS) comes from the model's own record, so the search output is not read again.
    The file holds tensors and plain types only and is read with ``weights_only=True``: a pickle that would run
    code (a model shared through a DVC remote or a cluster file system) is refused, as is a damaged file (its
    checksum differs), with a :class:`~lsnmt.train.checkpoint.Damaged` (a :class:`~lsnmt.io.DataError`).
    """
    state = ckpt.load(model_path, remedy=f"rerun the train stage of {method} (its checkpoints are in work/)")
    # the method's config fixes its inference route (e.g. FD: shared)
    kind, cfg = resolve(method_cfg, method, f"experiments.{exp}.method_cfg")
    cfg = with_route(kind, bind(exp, model, method, kind, cfg, stored=state.get("config", {}).get("method")), route)
    cfg = with_top_w(kind, cfg, top_w)
    net = build_transformer(model, vocab_size=vocab.size, num_languages=len(vocab.languages),
                            padding_idx=vocab.pad, method=kind, method_cfg=cfg)
    net.load_state_dict(state["model"])
    net.max_positions = positions  # the cap (module docstring)
    return net.eval()


def batches(direction: Direction, max_tokens: int, max_sentences: int | None = None) -> list[np.ndarray]:
    """Indices of the first ``max_sentences`` sentences in batches of at most ``max_tokens`` padded source
    tokens, longest first."""
    sizes = direction.src_sizes[:max_sentences]
    order = np.argsort(-sizes, kind="stable")
    out, start = [], 0
    while start < len(order):
        longest = int(sizes[order[start]])
        n = max(1, max_tokens // max(longest, 1))
        out.append(order[start:start + n])
        start += n
    return out


def translate_direction(model: torch.nn.Module, direction: Direction, cfg: DecodeConfig, vocab: Vocab,
                        device: torch.device, max_steps: int) -> list[list[int]]:
    """Best hypothesis (token ids) of every sentence of ``direction``, in corpus order (``cfg``: the ``decode``
    section; ``max_steps``: the model's training updates, named in the length-limit warning)."""
    return decode_direction(model, direction, cfg, vocab, device, max_steps)[0]


def decode_direction(model: torch.nn.Module, direction: Direction, cfg: DecodeConfig, vocab: Vocab,
                     device: torch.device, max_steps: int) -> tuple[list[list[int]], int]:
    """:func:`translate_direction`'s hypotheses and how many of them reached their length limit (:func:`at_limit`;
    a warning when any did)."""
    hyps = [None] * min(len(direction), cfg.max_sentences or len(direction))
    cut = 0
    for idx in batches(direction, cfg.max_tokens, cfg.max_sentences):
        rows = [direction.src[int(i)] for i in idx]
        src = torch.full((len(rows), max(len(r) for r in rows) + 1), vocab.pad, dtype=torch.long)
        for k, r in enumerate(rows):
            src[k, :len(r)] = torch.from_numpy(r.astype(np.int64))
            src[k, len(r)] = vocab.eos
        langs = LangContext.single(direction.src_lang, direction.tgt_lang, len(rows), device)
        result = beam_search(model, src.to(device), langs, beam=cfg.beam, lenpen=cfg.lenpen,
                             max_len_a=cfg.max_len_a, max_len_b=cfg.max_len_b, eos=vocab.eos, pad=vocab.pad)
        for i, tokens in zip(idx.tolist(), result.tokens, strict=True):
            hyps[i] = tokens
        limits = max_lengths(src, vocab.pad, cfg.max_len_a, cfg.max_len_b, model.max_positions - 1)
        cut += at_limit(result.tokens, limits.tolist())
    if cut:  # the length limit (fairseq's max_len_a 0, max_len_b 200 for the papers) must not truncate output
        log.warning("%s: %d of %d hypotheses reached the length limit (%g x source + %d, at most the model's %d "
                    "positions - 1, as fairseq): %s", direction.name, cut, len(hyps), cfg.max_len_a, cfg.max_len_b,
                    model.max_positions, length_advice(cut, len(hyps), max_steps))
    return hyps, cut  # type: ignore[return-value]


def at_limit(tokens: list[list[int]], limits: list[int]) -> int:
    """Hypotheses that stopped at their length limit (a forced end: probably cut), not at their own EOS."""
    return sum(len(t) >= n for t, n in zip(tokens, limits, strict=True))


def translate_method(view: TranslateView, exp: str, method: str, model_path: Path, spm_dir: Path, bin_dir: Path,
                     out: Path) -> dict[str, dict]:
    """:func:`translate` through every system of ``method`` (``lsnmt.methods.systems``) of experiment ``exp``: the
    configured route into ``out``, each other route into ``out/<route>``, each top-w sweep point into
    ``out/w<w>``; return line counts per system."""
    counts = {}
    for system in systems(view.method_cfg, method, f"experiments.{exp}.method_cfg"):
        counts[system.name] = translate(view, exp, method, model_path, spm_dir, bin_dir, out / system.subdir,
                                        route=system.route, top_w=system.top_w)
    return counts


def translate(view: TranslateView, exp: str, method: str, model_path: Path, spm_dir: Path, bin_dir: Path, out: Path,
              route: str | None = None, top_w: int | None = None) -> dict[str, dict[str, int]]:
    """Write the hypotheses of every test set (``{out}/{src}-{tgt}.hyp``, ``{out}/{test set}/…``: module
    docstring), atomically, decoding through ``route`` (``None``: the method's configured route) with ``top_w``
    (``None``: the method's own); return line counts per test set and direction."""
    vocab = Vocab.load(bin_dir)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = load_model(method, model_path, vocab, exp=exp, model=view.model, positions=view.decode_positions,
                       method_cfg=view.method_cfg, route=route, top_w=top_w).to(device)
    sp = spm.SentencePieceProcessor(model_file=str(spm_dir / "spm.model"))
    counts = {}
    with atomic_dir(out) as tmp:
        for test_set, pairs in view.data.test_sets.items():
            directions = load_split(bin_dir, test_set, pairs, vocab)
            counts[test_set] = translate_set(model, view, vocab, sp, device, directions,
                                             tmp / test_set_subdir(test_set))
            log.info("translate %s: %d directions, %d sentences", test_set, len(directions),
                     sum(counts[test_set].values()))
    return counts


def translate_set(model: torch.nn.Module, view: TranslateView, vocab: Vocab, sp: spm.SentencePieceProcessor,
                  device: torch.device, directions: list[Direction], out: Path) -> dict[str, int]:
    """Write ``{out}/{src}-{tgt}.hyp`` for every direction of one test set and ``{out}/length_limit.json``
    (module docstring); return line counts."""
    out.mkdir(parents=True, exist_ok=True)
    counts, cut = {}, {}
    for direction in progress(directions, "translate", unit="direction"):
        hyps, cut[direction.name] = decode_direction(model, direction, view.decode, vocab, device, view.train.max_steps)
        with open(out / f"{direction.name}.hyp", "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(sp.decode(h).replace("\n", " ") + "\n" for h in hyps)
        counts[direction.name] = len(hyps)
        log.info("translate %s: %d sentences", direction.name, len(hyps))
    write_json(out / LENGTH_LIMIT, {"max_len_a": view.decode.max_len_a, "max_len_b": view.decode.max_len_b,
                                    "at_limit": cut})
    return counts
