"""sacreBLEU scores of one translation direction, each stored with its signature.

``evaluate.metrics`` names (Post 2018, sacreBLEU; detokenised, case-sensitive, one reference):

``bleu``
    BLEU = BP * exp(1/4 * sum_{n=1..4} log p_n), BP = min(1, exp(1 - r/c)), ``smooth:exp``, tokenizer 13a
    unless ``evaluate.bleu_tokenize`` names one for the target language (``zh``, ``ja-mecab``,
    ``ko-mecab``). CLM (Sec. 4.3): ``BLEU+case.mixed+numrefs.1+smooth.exp+tok.13a+version.1.5.1``.
``spbleu-flores101`` / ``spbleu-flores200``
    the same BLEU over the pieces of the FLORES-101 / FLORES-200 sentencepiece model (Goyal et al. 2022;
    LSL Sec. 4: ``tok:flores101``; LMS-FD Sec. 4: the FLORES-200 tokenizer).
``chrf``
    chrF2 = (1 + b^2) chrP chrR / (b^2 chrP + chrR), b = 2, character n-grams 1..6, no word n-grams
    (Popović 2015); LSL's signature ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no``.

sacreBLEU downloads a FLORES sentencepiece model on first use into
``$SACREBLEU/models/`` (default ``~/.sacrebleu/models/``). This module looks
first and raises :class:`~lsnmt.io.DataError` saying which file to place
where: no download is attempted and no other tokenizer is substituted.

When the hypotheses cover only the first N test sentences (``decode.max_sentences``)
they are scored against the first N reference lines; N is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.base import Metric
from sacrebleu.tokenizers import tokenizer_spm

from lsnmt.data.spbleu import MODELS, spm_model_path
from lsnmt.io import DataError, count_lines, iter_lines

SACREBLEU_METRICS = ("bleu", "spbleu-flores101", "spbleu-flores200", "chrf")
"""Metrics computed by sacreBLEU (``comet`` is the other one, in :mod:`lsnmt.eval.comet`)."""


def require_spm_model(tokenizer: str) -> Path:
    """The model path of ``tokenizer``, or a :class:`DataError` naming the URL to fetch and where to put it."""
    path = spm_model_path(tokenizer)
    if not path.is_file():
        url = MODELS[tokenizer][0] if tokenizer in MODELS else tokenizer_spm.SPM_MODELS[tokenizer]["url"]
        raise DataError(
            f"spBLEU with tokenizer {tokenizer!r} needs sacreBLEU's sentencepiece model, which is not at {path}. "
            f"Run the download stage (it fetches it there), or download {url} on a machine with internet access "
            f"and copy it to exactly {path} "
            f"(the directory is $SACREBLEU/models, default ~/.sacrebleu/models; set SACREBLEU before the run "
            f"to use another directory). No other tokenizer is used in its place.")
    return path


def bleu_tokenizer(metric: str, tgt: str, bleu_tokenize: Mapping[str, str]) -> str:
    """sacreBLEU tokenizer of a BLEU-type ``metric`` for target language ``tgt``."""
    if metric.startswith("spbleu-"):
        return metric.removeprefix("spbleu-")
    return bleu_tokenize.get(tgt, "13a")


@lru_cache(maxsize=32)
def _cached_metric(metric: str, tokenize: str, spm_path: str) -> Metric:  # spm_path: part of the cache key
    if metric == "chrf":
        return CHRF(char_order=6, word_order=0)
    try:
        return BLEU(tokenize=tokenize)
    except (RuntimeError, ImportError) as exc:  # e.g. ja-mecab / ko-mecab without their extra packages
        raise DataError(f"sacreBLEU tokenizer {tokenize!r} cannot be built: {exc}".strip()) from None


def build_metric(metric: str, tgt: str, bleu_tokenize: Mapping[str, str]) -> Metric:
    """The sacreBLEU metric object of ``metric`` for target language ``tgt`` (cached)."""
    if metric not in SACREBLEU_METRICS:
        raise ValueError(f"{metric!r} is not a sacreBLEU metric ({', '.join(SACREBLEU_METRICS)})")
    if metric == "chrf":
        return _cached_metric("chrf", "", "")
    tokenize = bleu_tokenizer(metric, tgt, bleu_tokenize)
    spm_path = str(require_spm_model(tokenize)) if tokenize in tokenizer_spm.SPM_MODELS else ""
    return _cached_metric("bleu", tokenize, spm_path)


def read_pair(hyp_path: Path, ref_path: Path, max_sentences: int | None = None) -> tuple[list[str], list[str]]:
    """Hypotheses and the matching first reference lines.

    The hypothesis file must hold ``min(M, max_sentences)`` lines for a reference of M lines
    (``decode.max_sentences``); anything else is a :class:`DataError` naming both files.
    """
    if not hyp_path.is_file():
        raise DataError(f"{hyp_path}: hypotheses not found (run the translate stage first)")
    n_ref = count_lines(ref_path)
    expected = n_ref if max_sentences is None else min(n_ref, max_sentences)
    hyps = list(iter_lines(hyp_path))
    if len(hyps) != expected:
        raise DataError(f"{hyp_path} has {len(hyps)} lines but {expected} were expected: {ref_path} has {n_ref} "
                        f"lines and decode.max_sentences is {max_sentences}")
    refs = list(iter_lines(ref_path))[:expected]
    return hyps, refs


def score(metric: Metric, hyps: Sequence[str], refs: Sequence[str]) -> dict[str, Any]:
    """``{"name", "score", "signature", "text"}`` of one corpus-level score."""
    result = metric.corpus_score(list(hyps), [list(refs)])
    signature = metric.get_signature().format()
    return {"name": result.name, "score": float(result.score), "signature": signature,
            "text": result.format(width=2)}


def score_direction(hyps: Sequence[str], refs: Sequence[str], tgt: str, metrics: Sequence[str],
                    bleu_tokenize: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Every sacreBLEU metric of ``metrics`` (others are skipped) for one direction into ``tgt``."""
    return {m: score(build_metric(m, tgt, bleu_tokenize), hyps, refs) for m in metrics if m in SACREBLEU_METRICS}
