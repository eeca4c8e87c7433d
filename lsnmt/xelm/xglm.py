"""XGLM-1.7B's tokenizer, loaded through ``transformers`` (x-elm Sec. 3.1, 5.2); its weights as the seed:
:mod:`lsnmt.xelm.xglm_weights` (apart, so that ``lm_data``, which tokenises, imports no model or checkpoint code).

With ``lm_data.init: xglm`` the ``lm_data`` stage tokenises with XGLM's tokenizer and the ``lm_seed`` stage writes
XGLM's weights as the seed ``model.pt`` instead of training one; every expert then branches from them (x-BTM
Step 1). ``lm_data.pretrained`` is a Hugging Face id (``facebook/xglm-1.7B``, fetched into the Hugging Face cache
on first use) or a local directory in ``save_pretrained`` layout; offline without a copy, both stages stop with
one line naming what to fetch and where to put it.

**Weights.** XGLM (Lin et al. 2022) is the project's LM exactly (``models/lm.py``): token embedding scaled by
``sqrt(d)`` plus fairseq's sinusoidal positions (offset 2), pre-norm layers (self-attention, GELU FFN), a final
LayerNorm, the output projection tied to the embedding. :func:`lsnmt.xelm.xglm_weights.state_dict` renames
transformers' ``XGLMForCausalLM`` parameters onto :func:`models.lm.build_lm`'s; the test compares both models' logits.

**Tokenizer.** XGLM's ids follow fairseq's dictionary: ``<s> <pad> </s> <unk>`` = 0-3, then the sentencepiece
pieces (sentencepiece id + 1), then 7 ``<madeupword>`` symbols (256,008 for XGLM-1.7B). A tokenizer whose special
ids differ is refused. Where transformers builds one from ``sentencepiece.bpe.model`` alone, it does not apply
that layout; :func:`tokenizer_from_spm` builds XGLM's from the sentencepiece model as XGLM's converter does.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from lsnmt.data.config import ROOT
from lsnmt.io import DataError

log = logging.getLogger(__name__)

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
"""fairseq's ids 0, 1, 2, 3 (XGLM's ``bos``, ``pad``, ``eos``, ``unk``)."""
SPM_FILE = "sentencepiece.bpe.model"
PREFIX = "xglm:"
"""``meta.json``'s ``tokenizer`` of LM data tokenised by XGLM's tokenizer: ``xglm:<lm_data.pretrained>``."""


def source(name: str) -> str:
    """``lm_data.pretrained`` as transformers reads it: a local directory (relative to the repository) or a hub id."""
    local = Path(name) if Path(name).is_absolute() else ROOT / name
    return str(local) if local.is_dir() else name


def unavailable(name: str, exc: BaseException) -> DataError:
    return DataError(
        f"XGLM weights / tokenizer {name!r} cannot be loaded ({type(exc).__name__}: {str(exc).splitlines()[0][:160]}); "
        f"on a machine with internet run `hf download facebook/xglm-1.7B --local-dir models/xglm-1.7B` (about "
        "3.5 GB), copy that folder here and set lm_data.pretrained: models/xglm-1.7B in params.yaml, or set "
        "lm_data.init: scratch to train a seed instead (perplexities then compared with the paper only relatively)")


class Tokenizer:
    """XGLM's tokenizer with the sentencepiece calls ``lm_data``, ``lm_eval`` and ``lm_icl`` make."""

    def __init__(self, tok: Any) -> None:  # a transformers tokenizer
        self.tok = tok
        ids = [tok.convert_tokens_to_ids(s) for s in SPECIALS]
        if ids != [0, 1, 2, 3]:
            raise DataError(f"tokenizer {getattr(tok, 'name_or_path', '?')!r}: ids of {list(SPECIALS)} are {ids}, "
                            "not XGLM's fairseq layout 0-3")

    def encode(self, text: str | list[str]) -> list[int] | list[list[int]]:
        """Ids without special tokens (the LM stream adds ``</s>`` before each document itself)."""
        if isinstance(text, str):
            return self.tok(text, add_special_tokens=False)["input_ids"]
        return self.tok(list(text), add_special_tokens=False)["input_ids"] if text else []

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, clean_up_tokenization_spaces=False)

    def get_piece_size(self) -> int:
        return len(self.tok)

    def bos_id(self) -> int:
        return 0

    def pad_id(self) -> int:
        return 1

    def eos_id(self) -> int:
        return 2

    def unk_id(self) -> int:
        return 3


def tokenizer_from_spm(model_file: Path) -> Any:
    """XGLM's tokenizer built from its sentencepiece model: fairseq's 4 specials, the pieces after the model's own
    3 control symbols, the 7 made-up words (transformers' ``XGLMConverter`` vocabulary)."""
    from tokenizers.models import Unigram
    from transformers import XGLMTokenizer
    from transformers.convert_slow_tokenizer import SentencePieceExtractor

    kw = SentencePieceExtractor(str(model_file)).extract(Unigram)
    vocab = [(s, 0.0) for s in SPECIALS] + [tuple(p) for p in kw["vocab"][3:]]
    return XGLMTokenizer(vocab=vocab, _spm_precompiled_charsmap=kw.get("_spm_precompiled_charsmap"))


def _spm_file(name: str) -> Path | None:
    local = Path(source(name))
    if local.is_dir():
        return local / SPM_FILE if (local / SPM_FILE).is_file() else None
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(name, SPM_FILE))


def load_tokenizer(name: str) -> Tokenizer:
    """XGLM's tokenizer from ``name`` (hub id or directory), checked to follow fairseq's id layout."""
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(source(name))
        if [tok.convert_tokens_to_ids(s) for s in SPECIALS] != [0, 1, 2, 3]:
            spm_file = _spm_file(name)
            if spm_file is not None:
                log.info("%s: tokenizer rebuilt from %s in XGLM's fairseq id layout", name, spm_file)
                tok = tokenizer_from_spm(spm_file)
    except (OSError, ValueError, ImportError) as exc:
        raise unavailable(name, exc) from None
    return Tokenizer(tok)
