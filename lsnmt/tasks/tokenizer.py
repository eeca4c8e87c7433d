"""The sub-word tokenizer of a task, as a ``tokenizers.Tokenizer`` saved with the prepared data.

* ``encoder.init: pretrained``: the checkpoint's own ``tokenizer.json`` (XLM-R's 250,002-piece unigram
  SentencePiece model), from a local ``save_pretrained`` directory or the Hugging Face hub; offline and not
  cached, a :class:`~lsnmt.io.DataError` says what to fetch and where to point ``encoder.name``.
* ``encoder.init: random`` (tests, the embedded default): a unigram SentencePiece model trained on the task's
  training text with ``sentencepiece`` (deterministic; the ``tokenizers`` trainer is not) and loaded into
  the same ``tokenizers`` pipeline XLM-R uses: NFKC, ``▁`` for spaces with a dummy prefix (Metaspace), the
  pieces and their log-probabilities. Ids follow XLM-R: ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3.

Inputs are assembled without the tokenizer's post-processor: ``<s> A </s>`` and ``<s> Q </s></s> C </s>``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

from lsnmt.io import DataError

SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
CLS, PAD, SEP, UNK = range(4)


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Tokenizer:
    """A unigram tokenizer of at most ``vocab_size`` entries (specials included) trained on ``texts``."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([t for t in texts if t.strip()]), model_writer=buf, vocab_size=vocab_size - 1,
        model_type="unigram", character_coverage=1.0, num_threads=1, hard_vocab_limit=False, unk_id=0,
        bos_id=-1, eos_id=-1, pad_id=-1, normalization_rule_name="nfkc", minloglevel=2)
    sp = spm.SentencePieceProcessor(model_proto=buf.getvalue())
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size()) if i != sp.unk_id()]
    vocab = [(s, 0.0) for s in SPECIALS] + pieces
    tok = Tokenizer(models.Unigram(vocab, unk_id=UNK, byte_fallback=False))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    return tok


def pretrained_tokenizer(name: str) -> Tokenizer:
    """``tokenizer.json`` of checkpoint ``name`` (a directory, or a hub id fetched into the HF cache)."""
    local = Path(name) / "tokenizer.json"
    if local.is_file():
        path = local
    else:
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(repo_id=name, filename="tokenizer.json"))
        except Exception as exc:  # offline, unknown repo, HTTP errors: one message
            raise DataError(
                f"cannot get the tokenizer of {name!r} (https://huggingface.co/{name}/blob/main/tokenizer.json): "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}. Offline: fetch the "
                f"checkpoint where there is internet (`hf download {name}`, or `save_pretrained` into a "
                "directory) and set task_cfg.<task>.encoder.name to that directory") from None
    tok = Tokenizer.from_file(str(path))
    check_specials(tok, str(path))
    return tok


def check_specials(tok: Tokenizer, where: str) -> None:
    """XLM-R's special ids (``<s>`` 0, ``<pad>`` 1, ``</s>`` 2, ``<unk>`` 3), or a DataError."""
    got = tuple(tok.token_to_id(s) for s in SPECIALS)
    if got != (CLS, PAD, SEP, UNK):
        raise DataError(f"{where}: special tokens {dict(zip(SPECIALS, got, strict=True))} are not XLM-R's "
                        f"{dict(zip(SPECIALS, range(4), strict=True))}")
