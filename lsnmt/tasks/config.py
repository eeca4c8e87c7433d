"""Typed config of the NER and QA experiments on XLM-R (LMS-FD Sec. 5.3-5.4, App. B-C).

``experiments.<exp>.task_cfg.<name>`` is one :class:`TaskConfig`; the top-level ``tasks`` list names the
tasks the pipelines run and ``task_methods`` the methods (``naive`` or a key of the experiment's
``task_method_cfg``, built into :class:`models.ls.lms.LMSConfig` / ``LMSFDConfig``: ``lsnmt.methods``).

Values the paper states: XLM-R base, a token classifier (NER) or a start/end span head (QA), dropout 0.1,
20 epochs, d = 32, 3 seeds averaged. It does not state learning rate, batch size, sequence length or model
selection; the paper-scale experiment takes them from the XTREME recipes the authors used for XLM-R base in
their previous work (Xu et al. 2022, scripts ``train_panx.sh`` / ``train_qa.sh``): NER lr 2e-5, batch 32,
128 tokens, best dev checkpoint; QA lr 3e-5, batch 32, 384 tokens, stride 128, 500 warm-up steps, weight
decay 1e-4, last checkpoint (TyDiQA-GoldP has no dev set besides the one reported).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from lsnmt.data.config import DownloadConfig, TaskSource
from lsnmt.languages import is_known
from lsnmt.typed import Count, FieldError, NonNegative, Positive, Range, Rate, SafeName, Seed
from models.config.xlmr import EncoderConfig

TYDIQA_LANGUAGES: dict[str, str] = {
    "ar": "arabic", "bn": "bengali", "en": "english", "fi": "finnish", "id": "indonesian", "ko": "korean",
    "ru": "russian", "sw": "swahili", "te": "telugu"}
"""TyDiQA-GoldP's languages: ISO code -> the prefix of its example ids (``bengali--1234-0``)."""


@dataclass(frozen=True, kw_only=True)
class TaskConfig:
    """One fine-tuning task: data, encoder, optimisation (AdamW, linear decay after warm-up) and seeds."""

    kind: Literal["ner", "qa"]
    """``ner``: token classification, span F1 (seqeval); ``qa``: extractive span, SQuAD F1."""
    languages: tuple[str, ...]
    """ISO codes (WikiANN language ids; TyDiQA: keys of ``TYDIQA_LANGUAGES``)."""
    source: TaskSource
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    epochs: Count = 20
    batch_size: Count = 32
    """Examples (NER sentences, QA windows) per update, all of one language (homogeneous batches, Sec. 5)."""
    lr: Positive = 2e-5
    weight_decay: NonNegative = 0.0
    """AdamW decoupled weight decay on every weight but biases and LayerNorms (XTREME's recipe)."""
    warmup_steps: Annotated[int, Range(ge=0)] = 0
    adam_eps: Positive = 1e-8
    clip_norm: NonNegative = 1.0
    dropout: Rate = 0.1
    """Hidden and attention dropout of the encoder and dropout before the head (Sec. 5.3-5.4: 0.1)."""
    max_length: Count = 128
    """Sub-word tokens per example, ``<s>``/``</s>`` included; NER sentences beyond it are truncated for
    training and predicted ``O`` past the cut; QA contexts are split into overlapping windows."""
    doc_stride: Count = 128
    """QA: tokens between the starts of two consecutive context windows."""
    max_query_length: Count = 64
    max_answer_length: Count = 30
    n_best: Count = 20
    """QA decoding: the ``n_best`` best start and end logits per window, answers up to ``max_answer_length``."""
    seeds: tuple[Seed, ...] = (1, 2, 3)
    """One run per seed; results are averaged over them (Sec. 5: 3 seeds)."""
    select: Literal["best", "last"] = "last"
    """``best``: the epoch with the highest mean dev F1 (needs a dev split: WikiANN); ``last``: the final one."""
    max_train_per_language: Count | None = None
    """Keep the first N training examples of each language (quick runs; ``None``: all)."""
    eval_batch_size: Count = 64
    cpu_threads: Count | None = None
    """Intra-op threads of torch on CPU (``None``: torch's default). Tiny models run fastest on one: with
    two, each step of the 32-dim encoder took 13x longer on a shared 2-core machine."""
    citation: str = ""

    def __post_init__(self) -> None:
        for i, code in enumerate(self.languages):
            if not is_known(code):
                raise FieldError(f"languages[{i}]", f"{code!r} is not a known language code (see lsnmt/languages.py)")
            if self.kind == "qa" and code not in TYDIQA_LANGUAGES:
                raise FieldError(f"languages[{i}]", f"{code!r} is not a TyDiQA-GoldP language "
                                 f"({', '.join(sorted(TYDIQA_LANGUAGES))})")
        if not self.languages or len(set(self.languages)) != len(self.languages):
            raise FieldError("languages", "expected a non-empty list without duplicates")
        wanted = {"ner": "wikiann", "qa": "tydiqa"}[self.kind]
        if self.source.kind != wanted:
            raise FieldError("source.kind", f"a {self.kind} task reads {wanted!r} data, got {self.source.kind!r}")
        if self.kind == "qa" and self.select == "best":
            raise FieldError("select", "TyDiQA-GoldP has no dev split besides the reported one: use `last`")
        if not self.seeds:
            raise FieldError("seeds", "at least one seed")
        if self.kind == "qa" and self.max_length - self.max_query_length - 4 < 1:
            raise FieldError("max_length", f"{self.max_length} leaves no room for the context after "
                             f"max_query_length {self.max_query_length} and 4 special pieces")


# The task stages' views (lsnmt.view): exactly the keys each reads; their job lists come with the runner (``tasks``,
# ``task_methods``: :func:`lsnmt.view.job_list`). task_train's, which types the methods' entries, lies in
# ``lsnmt/tasks/train_view.py``: task_prep and task_eval import no method schema.


@dataclass(frozen=True, kw_only=True)
class TaskPrepView:
    """``task_prep``: the tasks (their sources, languages and features' settings) and how to download."""

    task_cfg: dict[SafeName, TaskConfig] = field(default_factory=dict)
    download: DownloadConfig = field(default_factory=DownloadConfig)


@dataclass(frozen=True, kw_only=True)
class TaskEvalView:
    """``task_eval`` reads no section: it scores the predictions ``task_train`` wrote (its outputs, which it depends
    on), so a task setting reruns it through them, never by itself."""
