"""x-elm's ``lm_data`` section (its languages, HMR targets, where the seed comes from, and what the ``lm_data`` stage
keeps of each language's monolingual text) and the ``lm_data`` stage's view, :class:`LMDataView`: apart from the
LMs' training schema (:mod:`lsnmt.xelm.config`), which the stage neither reads nor imports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lsnmt.data.config import DataConfig, SpmConfig
from lsnmt.typed import FieldError


@dataclass(frozen=True, kw_only=True)
class LMDataConfig:
    """The ``lm_data`` section: x-elm's languages, where the seed comes from, and what the ``lm_data`` stage keeps
    of each language's monolingual text; ``{}``: the experiment runs no x-elm stage."""

    languages: tuple[str, ...] = ()
    """Pretraining languages of the seed and the experts (``()``: every data language that is not a target)."""
    targets: tuple[str, ...] = ()
    """New languages, unseen by the seed and the experts, each adapted by HMR (x-elm Sec. 6.3: az, he, pl, sv)."""
    init: Literal["xglm", "scratch"] = "scratch"
    """Where the seed comes from. ``xglm``: XGLM's released weights and tokenizer, ``pretrained`` (x-elm Sec. 3.1,
    5.2; ``lsnmt/xelm/xglm.py``); ``xelm.lm`` must describe that checkpoint. ``scratch`` *(for machines without
    the weights)*: an LM of ``xelm.lm`` trained first on the same text with ``xelm.seed``; the report then compares
    perplexities with the paper only relatively (gains over the dense model), as tokenizer and seed differ. The
    data's tokenizer follows it, hence its place here."""
    pretrained: str = "facebook/xglm-1.7B"
    """With ``init: xglm``: a Hugging Face id or a local ``save_pretrained`` directory (relative to the repository)."""
    valid_docs: int = 5000
    """Perplexity on the first N validation documents of each language (x-elm Sec. 5.4: 5,000)."""
    max_train_docs: int | None = None
    """Keep at most the first N training documents per language (``None``: all)."""
    dedup: bool = True
    """*(choice)* Drop repeated training documents of a language (the default's English side repeats across
    Tatoeba pairs)."""
    vocab_size: int | None = None
    """``None``: tokenise with the experiment's shared sentencepiece model (``data/{exp}/spm``; x-elm keeps
    XGLM's). A size: ``lm_data`` trains an LM tokenizer of that size (the ``spm`` stage's recipe and settings,
    ``spm_sentences`` per language) on the pretraining languages only, e.g. a small vocabulary whose softmax a CPU
    can afford. Required with ``init: scratch`` and HMR targets: the shared model is trained on every data
    language, the targets included, so a seed trained from scratch on it would not meet them as unseen."""
    spm_sentences: int = 20_000
    """Balanced sample per language for the LM tokenizer (with ``vocab_size``)."""

    def __post_init__(self) -> None:
        if self.init == "xglm" and self.vocab_size is not None:
            raise FieldError("vocab_size", "init: xglm brings XGLM's tokenizer; leave vocab_size unset")
        if self.init == "scratch" and self.vocab_size is None and self.targets:
            raise FieldError(
                "vocab_size",
                "init: scratch with HMR targets needs its own LM tokenizer (a size "
                "here, trained on the pretraining languages only): the experiment's spm model is "
                "trained on the HMR targets too, which the seed must not have seen (x-elm Sec. 6.3)",
            )
        if set(self.languages) & set(self.targets):
            raise FieldError("targets", "an HMR target must not be one of lm_data.languages (it is a new language)")

    def seen(self, data_languages: tuple[str, ...]) -> tuple[str, ...]:
        """The pretraining languages: ``languages`` or every data language that is not a target."""
        return self.languages or tuple(x for x in data_languages if x not in self.targets)

    def check(self, data_languages: tuple[str, ...]) -> None:
        """Every language is one of ``data.languages``."""
        for name, codes in (("languages", self.languages), ("targets", self.targets)):
            for i, code in enumerate(codes):
                if code not in data_languages:
                    raise FieldError(f"lm_data.{name}[{i}]", f"{code!r} is not in data.languages")


@dataclass(frozen=True, kw_only=True)
class LMDataView:
    """What the ``lm_data`` stage reads (:mod:`lsnmt.view`): the data (its corpora, the shared tokenizer's recipe)
    and ``lm_data``; not ``xelm``, whose training settings it does not use."""

    data: DataConfig
    spm: SpmConfig = field(default_factory=SpmConfig)
    lm_data: LMDataConfig | None = None
    """``None``: the experiment runs no x-elm stage (the stage writes "not configured")."""

    def __post_init__(self) -> None:
        if self.lm_data is not None:
            self.lm_data.check(self.data.languages)
