"""XLM-R (Hugging Face ``transformers``) with LMS / LMS+FD in its feed-forward layers, and the task heads.

LMS-FD Sec. 5.3-5.4 fine-tune XLM-R base with LMS (d = 32) "applied to each FFN layer": every layer's
``intermediate.dense`` (c = 768 -> r = 3072) and ``output.dense`` (3072 -> 768) becomes an
:class:`~models.ls.lms.LMSLinear` whose ``W`` and ``b`` *are* the pretrained parameters (the ``W`` of
``W + Wv Wf``, Eq. 1), with language-wise synthesis keyed by the example's language: a batch of language
``l`` (homogeneous batches, Sec. 5) computes ``x (W + Wv[l] Wf[l])^T + b``. LMS+FD adds the shared pair and
its route (Sec. 4). The translation modules are reused as they are; only the call differs:

Hugging Face's layers call ``dense(x)`` without our :class:`~models.lang.LangContext`, so
:class:`ScopedLinear` reads the batch's languages from :func:`language_scope`, a context variable that
:class:`TaskModel` sets around the encoder's forward and resets after it (never a module attribute). Outside
a scope an LMS projection raises instead of guessing a language. (Gradient checkpointing, which re-runs the
forward during backward outside the scope, is not supported.)

Heads: NER puts dropout and a linear token classifier on the last hidden states (Sec. 5.3, as
``XLMRobertaForTokenClassification``); QA a linear layer giving each sub-word a start and an end logit
(Sec. 5.4, as ``XLMRobertaForQuestionAnswering``, no dropout before it). Both initialised N(0, 0.02), bias 0.

``XLMR_BASE`` is ``xlm-roberta-base``'s published ``config.json``: counting it on the meta device needs no
download (``lsnmt/report/paper_counts.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

from torch import Tensor, nn

from lsnmt.io import DataError
from models.config.kinds import KINDS
from models.lang import LangContext
from models.ls.lms import LMSConfig, LMSLinear, lms_linear
from models.meta import meta_device

if TYPE_CHECKING:
    from models.config.xlmr import EncoderConfig

XLMR_BASE: dict[str, Any] = {
    "vocab_size": 250_002, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "max_position_embeddings": 514, "type_vocab_size": 1,
    "layer_norm_eps": 1e-5, "initializer_range": 0.02, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2,
    "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
"""``xlm-roberta-base/config.json`` (Conneau et al. 2020): 12 layers, 768/3072, 250,002 sub-words."""

FFN = ("intermediate.dense", "output.dense")
ATTENTION = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")

_LANGS: ContextVar[LangContext | None] = ContextVar("lsnmt_xlmr_langs", default=None)


@contextlib.contextmanager
def language_scope(langs: LangContext) -> Iterator[None]:
    """Make ``langs`` the batch's languages for the :class:`ScopedLinear` maps called inside the block."""
    token = _LANGS.set(langs)
    try:
        yield
    finally:
        _LANGS.reset(token)


class ScopedLinear(nn.Module):
    """``inner(x, langs)`` with ``langs`` from the enclosing :func:`language_scope` (HF calls ``dense(x)``)."""

    def __init__(self, inner: LMSLinear) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: Tensor) -> Tensor:
        langs = _LANGS.get()
        if langs is None and self.inner._route(None) != "share":
            raise RuntimeError("an LMS projection of XLM-R ran outside language_scope(): its language is unknown")
        return self.inner(x, langs)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        yield from self.inner.active_parameters(src, tgt)

    def aux_loss(self) -> Tensor | None:
        return None


def _get(module: nn.Module, dotted: str) -> nn.Module:
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


def _set(module: nn.Module, dotted: str, new: nn.Module) -> None:
    *parents, last = dotted.split(".")
    setattr(_get(module, ".".join(parents)) if parents else module, last, new)


def insert_lms(encoder: nn.Module, cfg: LMSConfig, num_languages: int) -> int:
    """Replace the FFN (and/or attention, ``cfg.where``) projections of every ``cfg.every``-th layer of
    ``encoder`` (an ``XLMRobertaModel``) by LMS maps over their own ``W``/``b``; return how many."""
    names = {"ffn": FFN, "attention": ATTENTION, "both": FFN + ATTENTION}[cfg.where]
    linear = lms_linear(cfg, num_languages=num_languages, side="encoder")
    count = 0
    for i, layer in enumerate(encoder.encoder.layer):
        if i % cfg.every != cfg.every - 1:
            continue
        for name in names:
            dense = _get(layer, name)
            assert isinstance(dense, nn.Linear), (name, type(dense))
            lms = linear(dense.in_features, dense.out_features, dense.bias is not None)
            lms.weight = dense.weight  # the pretrained W itself, not a copy
            lms.bias = dense.bias
            _set(layer, name, ScopedLinear(lms))
            count += 1
    return count


def encoder_config(cfg: EncoderConfig | None, *, vocab_size: int, dropout: float, max_positions: int) -> Any:
    """The ``XLMRobertaConfig`` of a random encoder (``cfg``) or of XLM-R base (``cfg=None``)."""
    from transformers import XLMRobertaConfig

    values = dict(XLMR_BASE, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    if cfg is not None:
        values.update(vocab_size=vocab_size, hidden_size=cfg.hidden_size, num_hidden_layers=cfg.layers,
                      num_attention_heads=cfg.heads, intermediate_size=cfg.ffn_dim,
                      max_position_embeddings=max_positions + 2)  # positions start after the pad index (1)
    return XLMRobertaConfig(**values)


def load_encoder(cfg: EncoderConfig, *, vocab_size: int, dropout: float, max_positions: int) -> nn.Module:
    """``XLMRobertaModel`` without pooler: ``cfg.name``'s pretrained weights, or random ones (``init: random``)."""
    from transformers import XLMRobertaModel

    if cfg.init == "random":
        return XLMRobertaModel(encoder_config(cfg, vocab_size=vocab_size, dropout=dropout,
                                              max_positions=max_positions), add_pooling_layer=False)
    try:
        model = XLMRobertaModel.from_pretrained(cfg.name, add_pooling_layer=False, hidden_dropout_prob=dropout,
                                                attention_probs_dropout_prob=dropout)
    except (OSError, ValueError) as exc:
        raise DataError(
            f"cannot load the pretrained encoder {cfg.name!r} (https://huggingface.co/{cfg.name}): "
            f"{str(exc).splitlines()[0]}. Offline: fetch it where there is internet (`hf download {cfg.name}` "
            "fills ~/.cache/huggingface; or `save_pretrained` into a directory) and set task_cfg.<task>.encoder."
            "name to that directory, or set HF_HOME to a copied cache") from None
    if model.config.vocab_size != vocab_size:
        raise DataError(f"encoder {cfg.name!r} has {model.config.vocab_size} embeddings but its tokenizer "
                        f"{vocab_size} entries: the tokenizer and the checkpoint do not belong together")
    return model


class TaskModel(nn.Module):
    """XLM-R encoder + one linear head over every position: ``(B, T)`` ids -> ``(B, T, outputs)`` logits."""

    def __init__(self, encoder: nn.Module, outputs: int, head_dropout: float) -> None:
        super().__init__()
        hidden = encoder.config.hidden_size
        self.encoder = encoder
        self.dropout = nn.Dropout(head_dropout)
        self.head = nn.Linear(hidden, outputs)
        nn.init.normal_(self.head.weight, 0.0, 0.02)
        nn.init.zeros_(self.head.bias)

    def forward(self, input_ids: Tensor, attention_mask: Tensor, langs: LangContext) -> Tensor:
        with language_scope(langs):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        return self.head(self.dropout(hidden))


def build_task_model(encoder: nn.Module, *, task: Literal["ner", "qa"], outputs: int, dropout: float,
                     num_languages: int, method: str | None = None, method_cfg: LMSConfig | None = None) -> TaskModel:
    """The task model around ``encoder``; ``method``, a kind available for the tasks (``Kind.tasks``: LMS,
    LMS+FD), inserts LMS into its FFNs."""
    if method is not None:
        if method not in KINDS or not KINDS[method].tasks or method_cfg is None:
            known = ", ".join(k for k, v in KINDS.items() if v.tasks)
            raise ValueError(f"XLM-R tasks take the kinds {known} with their config, got {method!r}")
        insert_lms(encoder, method_cfg, num_languages)
    return TaskModel(encoder, outputs, dropout if task == "ner" else 0.0)


def count_meta(*, task: Literal["ner", "qa"], outputs: int, num_languages: int, method: str | None = None,
               method_cfg: LMSConfig | None = None, vocab_size: int | None = None) -> TaskModel:
    """XLM-R base's task model on the meta device (instant; nothing downloaded): for parameter counts."""
    from transformers import XLMRobertaModel

    cfg = encoder_config(None, vocab_size=0, dropout=0.1, max_positions=0)
    if vocab_size is not None:
        cfg.vocab_size = vocab_size
    with meta_device():
        encoder = XLMRobertaModel(cfg, add_pooling_layer=False)
        return build_task_model(encoder, task=task, outputs=outputs, dropout=0.1, num_languages=num_languages,
                                method=method, method_cfg=method_cfg)
