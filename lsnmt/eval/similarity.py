"""Cross-lingual similarity search on encoder sentence embeddings (CLM Sec. 5.2.1, after Pan et al. 2021).

Sentence embedding: the mean of the encoder outputs over the non-pad positions
(tags and EOS included, as fairseq's encoder sees them),

    e(x) = 1/|x| * sum_{t : x_t != pad} h_t        h = Encoder(x) in R^{|x| x d}

On a multi-way corpus (sentence i of every language has the same meaning), for
each ordered language pair (a, b) sentence i of a retrieves the sentence of b
with the highest cosine similarity; top-1 accuracy is

    acc(a, b) = 1/N * |{i : argmax_j cos(e(a_i), e(b_j)) = i}|

CLM Table 5 averages acc over pairs with English (``english_centric``) and
over pairs between two non-English languages (``zero_shot``); ``all`` averages
every ordered pair. Random embeddings give about 1/N.

Tagging. CLM takes "the encoder representations on xx-en translation": a
sentence in language l is encoded as the source of the direction l -> pivot,
with that direction's tags and language ids (``LangContext(src=l, tgt=pivot)``).
With ``target-prefix`` tags every language gets ``<2en>`` (the tag of all xx-en
training directions); with ``source-prefix`` it is ``<l>`` (CLM's xx-en models).
Pivot sentences are tagged by the same xx-en rule (``<2en>``, or ``<en>`` for
``source-prefix`` and CLM's combined ``en-xx-target-xx-en-source`` style), as
CLM's xx-en encoders are what it probes with English sentences too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import permutations
from pathlib import Path

import numpy as np
import sentencepiece as spm
import torch

from lsnmt.data.config import TagStyle
from lsnmt.data.corpus import Vocab
from lsnmt.data.encode import encode_lines
from lsnmt.data.tags import add_tags, source_tag, tag_tokens
from lsnmt.eval.config import EvaluateView
from lsnmt.io import DataError, iter_lines
from models.lang import LangContext


def similarity_tags(style: TagStyle, lang: str, pivot: str) -> tuple[list[str], list[str]]:
    """(prefix, suffix) tags of a sentence in ``lang`` encoded as the source of ``lang -> pivot``."""
    if style in ("source-prefix", "en-xx-target-xx-en-source"):
        return [source_tag(lang)], []
    return tag_tokens(style, lang, pivot, pivot)


def read_multiway(prepared_dir: Path, corpus: str, languages: Sequence[str],
                  max_sentences: int | None) -> dict[str, list[str]]:
    """First ``max_sentences`` lines of ``multiway/{corpus}.{lang}`` for each language that has the file."""
    texts = {}
    for lang in languages:
        path = prepared_dir / "multiway" / f"{corpus}.{lang}"
        if path.is_file():
            texts[lang] = list(iter_lines(path))[:max_sentences]
    if len(texts) < 2:
        raise DataError(f"{prepared_dir / 'multiway'}: multi-way corpus {corpus!r} has fewer than two languages")
    return texts


def encode_multiway(spec: EvaluateView, texts: Mapping[str, list[str]], spm_dir: Path,
                    corpus: str) -> dict[str, list[list[int]]]:
    """Token ids (without EOS) of every sentence, tagged as the source of ``lang -> pivot``."""
    sp = spm.SentencePieceProcessor(model_file=str(spm_dir / "spm.model"))
    names = json.loads((spm_dir / "symbols.json").read_text(encoding="utf-8"))["symbols"]
    symbols = {name: sp.piece_to_id(name) for name in names}
    corpus_tag = next((s.tag for s in spec.data.sources if s.name == corpus), None)
    out = {}
    for lang, lines in texts.items():
        pre, suf = similarity_tags(spec.data.tags, lang, spec.data.pivot)
        out[lang] = encode_lines(sp, [add_tags(x, pre, suf, corpus_tag) for x in lines], symbols)
    return out


@torch.no_grad()
def sentence_embeddings(model: torch.nn.Module, sentences: Sequence[Sequence[int]], src_lang: int, tgt_lang: int,
                        vocab: Vocab, max_tokens: int = 8000) -> np.ndarray:
    """``(N, d)`` float64 mean-pooled encoder outputs of ``sentences`` (EOS appended), in input order."""
    device = next(model.parameters()).device
    order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
    out: np.ndarray | None = None
    start = 0
    while start < len(order):
        n = max(1, max_tokens // (len(sentences[order[start]]) + 1))
        idx = order[start:start + n]
        src = torch.full((len(idx), len(sentences[idx[0]]) + 1), vocab.pad, dtype=torch.long)
        for k, i in enumerate(idx):
            src[k, :len(sentences[i])] = torch.as_tensor(list(sentences[i]), dtype=torch.long)
            src[k, len(sentences[i])] = vocab.eos
        enc = model.encode(src.to(device), LangContext.single(src_lang, tgt_lang, len(idx), device))
        keep = (~enc.padding_mask).unsqueeze(-1).to(enc.out.dtype)  # (B, S, 1)
        pooled = (enc.out * keep).sum(1) / keep.sum(1)  # (B, D)
        if out is None:
            out = np.zeros((len(sentences), pooled.size(1)), dtype=np.float64)
        out[idx] = pooled.double().cpu().numpy()
        start += n
    return out if out is not None else np.zeros((0, 0))


def retrieval_accuracy(queries: np.ndarray, keys: np.ndarray) -> float:
    """Top-1 accuracy (%) of cosine retrieval: query i should find key i (ties: the lowest index)."""
    q = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    k = keys / np.maximum(np.linalg.norm(keys, axis=1, keepdims=True), 1e-12)
    best = (q @ k.T).argmax(axis=1)
    return 100.0 * float(np.mean(best == np.arange(len(q))))


def similarity_search(embeddings: Mapping[str, np.ndarray], pivot: str) -> dict:
    """Accuracy of every ordered pair ``"a-b"`` and the CLM Table 5 averages."""
    acc = {f"{a}-{b}": retrieval_accuracy(embeddings[a], embeddings[b])
           for a, b in permutations(sorted(embeddings), 2)}

    def avg(keys: list[str]) -> float | None:
        return sum(acc[k] for k in keys) / len(keys) if keys else None

    with_pivot = [k for k in acc if pivot in k.split("-")]
    return {"languages": sorted(embeddings), "sentences": len(next(iter(embeddings.values()))), "accuracy": acc,
            "english_centric": avg(with_pivot), "zero_shot": avg([k for k in acc if k not in with_pivot]),
            "all": avg(list(acc))}


def multiway_embeddings(spec: EvaluateView, model: torch.nn.Module, corpus: str, prepared_dir: Path, spm_dir: Path,
                        vocab: Vocab) -> dict[str, np.ndarray]:
    """Sentence embeddings of each language of a multi-way corpus (``evaluate.multiway_max_sentences`` each)."""
    langs = [lang for lang in spec.data.languages if lang in vocab.languages]
    texts = read_multiway(prepared_dir, corpus, langs, spec.evaluate.multiway_max_sentences)
    ids = encode_multiway(spec, texts, spm_dir, corpus)
    pivot = vocab.lang_id(spec.data.pivot) if spec.data.pivot in vocab.languages else None
    return {lang: sentence_embeddings(model, ids[lang], vocab.lang_id(lang),
                                      vocab.lang_id(lang) if pivot is None else pivot, vocab,
                                      spec.decode.max_tokens)
            for lang in ids}
