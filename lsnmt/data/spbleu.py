"""sacreBLEU's FLORES sentencepiece models for spBLEU, fetched by the ``download`` stage into sacreBLEU's cache.

sacreBLEU 2.x downloads the model of ``tokenize="flores101"`` / ``"flores200"`` on first use with
``urllib`` into ``$SACREBLEU/models/<basename of its URL>`` (default ``~/.sacrebleu/models``). FLORES-200's
URL there is a tinyurl redirect that answers 403 to Python's urllib (sacrebleu issue #274), so the
``evaluate`` stage (offline by design) would find no model. The ``download`` stage therefore fetches every
model the experiment's ``evaluate.metrics`` need from its direct URL (resumable, retried, checksummed by
:func:`lsnmt.data.fetch.fetch`) and stores it under exactly the name sacreBLEU looks for; a model already
there is left alone.

* ``flores101``: https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model (sacreBLEU's
  own URL; no checksum published: the sha256 seen is logged);
* ``flores200``: https://dl.fbaipublicfiles.com/large_objects/nllb/models/spm_200/flores200_sacrebleu_tokenizer_spm.model
  (the target of sacreBLEU's tinyurl, given in sacrebleu #274), md5 ``05c551ae7955b3980d5a9d044eb09d70``.

FLORES-200's md5 ``05c551ae7955b3980d5a9d044eb09d70`` is the value recorded for the byte-identical NLLB-200
``sentencepiece.bpe.model`` and OpenNMT's copy of this file (not verified against Meta's server from here): a
mismatch stops with both values, and a verified copy placed at the path the error names is used as it is.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from sacrebleu.tokenizers import tokenizer_spm

from lsnmt.data.config import DownloadConfig
from lsnmt.data.fetch import fetch
from lsnmt.io import DataError

log = logging.getLogger(__name__)

MODELS: dict[str, tuple[str, str | None]] = {
    "flores101": ("https://dl.fbaipublicfiles.com/fairseq/models/flores/sacrebleu_tokenizer_spm.model", None),
    "flores200": ("https://dl.fbaipublicfiles.com/large_objects/nllb/models/spm_200/"
                  "flores200_sacrebleu_tokenizer_spm.model", "05c551ae7955b3980d5a9d044eb09d70"),
}
"""tokenizer -> (direct URL, md5 or ``None``)."""


def spm_model_path(tokenizer: str) -> Path:
    """Where sacreBLEU loads the sentencepiece model of ``flores101`` / ``flores200`` from (its own naming of the
    cached file). ``tokenizer_spm.SACREBLEU_DIR`` is ``$SACREBLEU`` (read when sacreBLEU is imported) or
    ``~/.sacrebleu``."""
    url = tokenizer_spm.SPM_MODELS[tokenizer]["url"]
    return Path(tokenizer_spm.SACREBLEU_DIR) / "models" / os.path.basename(url)


def needed(metrics: tuple[str, ...]) -> list[str]:
    """The FLORES tokenizers that ``metrics`` (``evaluate.metrics``) score with."""
    return [m.removeprefix("spbleu-") for m in metrics if m.startswith("spbleu-")]


def fetch_models(metrics: tuple[str, ...], dl: DownloadConfig) -> list[Path]:
    """Each model ``metrics`` need, at the path sacreBLEU loads it from (fetched if absent); the paths."""
    out = []
    for tok in needed(metrics):
        url, md5 = MODELS[tok]
        path = spm_model_path(tok)
        if not path.is_file():
            try:
                fetch(url, path, md5=md5, retries=dl.retries, timeout=dl.timeout)
            except DataError as exc:
                raise DataError(f"spBLEU ({tok}): {exc}. Alternatively download {url} elsewhere and copy it to "
                                f"exactly {path}") from None
            log.info("spBLEU %s: sacreBLEU's model is at %s", tok, path)
        out.append(path)
    return out
