"""The ``claim`` section (the papers' claims at small scale, ours only) and the ``claim`` stage's view
(:mod:`lsnmt.view`). Torch-free, as the stage table and ``lsnmt.experiment.params`` read them."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal

from lsnmt.data.config import check_langs
from lsnmt.methods.schema import ClaimMethodTable
from lsnmt.train.config import TrainConfig
from lsnmt.typed import Count, FieldError, Range, SafeName, Seed
from models.config.model import ModelConfig

DenseKey = Literal["embed_dim", "ffn_dim", "heads", "encoder_layers", "decoder_layers"]


@dataclass(frozen=True, kw_only=True)
class ClaimConfig:
    """The papers' claims measured at small scale (``claim`` stage, ``lsnmt/claim/``; ours only): naive, dense
    naive models of other widths and language-specific methods on the base Transformer, on the synthetic task of
    ``lsnmt.data.synthetic``; the claims and their sources are ``lsnmt.claim.claims.CLAIMS``."""

    languages: tuple[str, ...]
    """Languages of the task, the pivot first; trained and tested pivot-centric (en-xx and xx-en)."""
    concepts: Count = 32
    """Words per language (``Task.concepts``)."""
    reverse: tuple[str, ...] = ()
    """Languages written in reverse word order."""
    scramble: tuple[str, ...] = ()
    """Languages with their own word order for each sentence length (``Task.scramble``)."""
    min_len: Count = 2
    max_len: Count = 5
    task_seed: Seed = 0
    """Seed of the lexicons and of the sentences (the same task for every method and seed)."""
    sentences: dict[Literal["train", "valid", "test"], Count] = field(
        default_factory=lambda: {"train": 600, "valid": 20, "test": 100}
    )
    """Concept sequences per split, disjoint across splits, rendered in every direction."""
    model: ModelConfig
    """The base Transformer: naive alone, and under every method (LS methods add their parameters to it)."""
    train: TrainConfig
    """Training of every job, a fixed budget (``max_steps``); ``seed`` is replaced by each of :attr:`seeds`, and
    ``batching`` by the method kind's (``TrainConfig.for_kind``, as ``stages/train.py``)."""
    beam: Count = 2
    methods: ClaimMethodTable
    """Methods beside ``naive`` (always trained, the baseline): ``method_cfg`` entries. FD and LMS+FD are decoded
    through both routes; the claims read the first method of each kind."""
    dense: dict[SafeName, dict[DenseKey, Count]] = field(default_factory=dict)
    """Dense naive models of other shapes, ``{name: {embed_dim: .., ffn_dim: ..}}`` (overrides of :attr:`model`):
    the baselines of the claims "X > a naive of X's total size" (LSL Sec. 4.3's wider baselines)."""
    dense_tolerance: Annotated[float, Range(ge=0, lt=1)] = 0.1
    """How far (relative) a dense model's total parameters may lie from a system's total for such a claim."""
    seeds: tuple[Seed, ...] = (1, 2)
    """Training seeds of every system, paired across systems; the intervals' seed term is their spread
    (``lsnmt.claim.interval``: Student's t on R - 1 degrees of freedom when it dominates, so two seeds give
    t = 12.7, five t = 2.8)."""
    bootstrap_samples: Count = 1000
    """Sentence resamples (``lsnmt.claim.bootstrap``): the intervals' sentence term."""
    significance: Annotated[float, Range(gt=0, lt=1)] = 0.05
    bootstrap_seed: Seed = 12345
    cpu_threads: Count = 1
    """``torch.set_num_threads`` while the stage runs (tiny models: more threads mostly wait)."""

    def __post_init__(self) -> None:
        check_langs("languages", self.languages)
        if len(set(self.languages)) != len(self.languages) or len(self.languages) < 2:
            raise FieldError("languages", f"at least two distinct languages, got {list(self.languages)}")
        for key in ("reverse", "scramble"):
            for i, code in enumerate(getattr(self, key)):
                if code not in self.languages:
                    raise FieldError(f"{key}[{i}]", f"{code!r} is not in languages")
        if both := sorted(set(self.reverse) & set(self.scramble)):
            raise FieldError("scramble", f"{both[0]!r} is also in reverse: a language has one word order")
        if self.min_len > self.max_len:
            raise FieldError("max_len", f"{self.max_len} is below min_len {self.min_len}")
        if set(self.sentences) != {"train", "valid", "test"}:
            raise FieldError("sentences", f"needs train, valid and test, got {sorted(self.sentences)}")
        if sum(self.concepts**n for n in range(self.min_len, self.max_len + 1)) < sum(self.sentences.values()):
            raise FieldError(
                "sentences",
                f"more than the distinct sequences of {self.min_len}-{self.max_len} of {self.concepts} concepts",
            )
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise FieldError("seeds", f"one or more distinct seeds, got {list(self.seeds)}")
        for name, shape in self.dense.items():
            if name == "naive" or name in self.methods:
                raise FieldError(f"dense.{name}", "is already a system: give the dense model its own name")
            try:
                overrides: dict[str, Any] = {str(k): v for k, v in shape.items()}
                replace(self.model, **overrides)
            except FieldError as exc:
                raise FieldError(f"dense.{name}", exc.message) from None


@dataclass(frozen=True, kw_only=True)
class ClaimView:
    """What the ``claim`` stage reads (:mod:`lsnmt.view`): its section only; it builds every job's experiment from
    it (``lsnmt.claim.task``)."""

    claim: ClaimConfig | None = None
    """``None``: the stage writes "not configured"."""
