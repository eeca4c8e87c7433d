"""The data stages' sections of ``params.yaml`` (``data``, ``download``, ``prepare``, ``sample``, ``spm``,
``encode``) and each data stage's view of them (:mod:`lsnmt.view`: exactly the keys the stage reads, which are the
stage table's ``params`` of the stage).

The data stages import this module, not :mod:`lsnmt.experiment.params`: their code dependencies, in both front
ends, hold no method, model-training, task or x-elm schema, so editing one of those reruns no data stage.
``Params.load`` (the graph, the Snakefile, the report) still checks the whole file.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.languages import is_known
from lsnmt.typed import Count, FieldError, Pattern, Positive, Range, SafeName, Seed, Sha256
from lsnmt.view import section

Split = Literal["train", "valid", "test", "multiway"]
DirectionSet = Literal["en-centric", "en-xx", "xx-en", "all", "en-centric+groups", "none"]
TagStyle = Literal["target-prefix", "source-prefix", "en-xx-target-xx-en-source", "src-tgt-suffix", "none"]

ROOT = Path(__file__).resolve().parents[2]
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


def check_langs(name: str, codes: tuple[str, ...]) -> None:
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
        check_langs("languages", self.languages)
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
        check_langs("languages", self.languages)
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
        return tuple(dict.fromkeys(pairs + [d for d in extra if len(d) == 2]))


@dataclass(frozen=True, kw_only=True)
class TaskSource:
    """Where ``task_prep`` gets a task's dataset, ``task_cfg.<name>.source``
    (``lsnmt/data/sources/{wikiann,tydiqa}.py``): a data source, so that the data layer needs nothing of the task
    schema (``lsnmt/tasks/config.py``)."""

    kind: Literal["wikiann", "tydiqa"]
    """``wikiann``: Rahimi et al.'s split files (``panx_dataset.tar``); ``tydiqa``: the official GoldP JSON."""
    path: str | None = None
    """A local copy: the release file(s) or a directory holding them (extracted or not)."""
    url: str | None = None
    """Override of the catalogue URL (one-file releases only: ``wikiann``)."""
    sha256: Sha256 | None = None
    mirror: str | None = None
    """Base URL or local directory that replaces the catalogue host (same file names)."""


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


Metric = Literal["bleu", "spbleu-flores101", "spbleu-flores200", "chrf", "comet"]
"""A score of ``evaluate.metrics`` (:class:`lsnmt.eval.config.EvaluateConfig`); ``download`` reads the list too: an
spBLEU metric makes it fetch sacreBLEU's FLORES SentencePiece model (:mod:`lsnmt.data.spbleu`)."""
DEFAULT_METRICS: tuple[Metric, ...] = ("bleu", "chrf")


def check_downsample(data: DataConfig, sample: SampleConfig) -> None:
    """``sample.per_source.downsample`` names sources of ``data.sources``."""
    names = [s.name for s in data.sources]
    for i, name in enumerate(sample.per_source.downsample):
        if name not in names:
            raise FieldError(f"sample.per_source.downsample[{i}]", f"{name!r} is not a source of data.sources "
                             f"(known: {', '.join(names) or 'none'})")


def check_vocab(data: DataConfig, spm: SpmConfig) -> None:
    """``spm.vocab_size`` holds the special pieces, every language / corpus / user symbol and one piece of text."""
    symbols = 2 * len(data.languages) + len({s.tag for s in data.sources if s.tag}) + len(spm.user_symbols)
    if spm.vocab_size < SPM_SPECIALS + symbols + 1:
        raise FieldError("spm.vocab_size", f"{spm.vocab_size} cannot hold the {SPM_SPECIALS} special pieces, "
                         f"{symbols} language / corpus / user symbols and at least one piece of text")


# The data stages' views (lsnmt.view): exactly the keys each stage reads, the stage table's params of the stage.


@dataclass(frozen=True, kw_only=True)
class DownloadView:
    """``download``: the corpora of ``data``, fetched as ``download`` says, and the FLORES SentencePiece model an
    spBLEU score of ``evaluate.metrics`` needs (:mod:`lsnmt.data.spbleu`)."""

    data: DataConfig
    download: DownloadConfig = field(default_factory=DownloadConfig)
    metrics: tuple[Metric, ...] = section("evaluate.metrics", default=DEFAULT_METRICS)
    """``evaluate.metrics``, typed as :class:`lsnmt.eval.config.EvaluateConfig` types it."""


@dataclass(frozen=True, kw_only=True)
class PrepareView:
    data: DataConfig
    prepare: PrepareConfig = field(default_factory=PrepareConfig)


@dataclass(frozen=True, kw_only=True)
class SpmView:
    data: DataConfig
    spm: SpmConfig = field(default_factory=SpmConfig)

    def __post_init__(self) -> None:
        check_vocab(self.data, self.spm)


@dataclass(frozen=True, kw_only=True)
class SampleView:
    """``sample``; ``spm`` too: ``sample.max_piece_ratio`` counts the pieces of the ``spm`` stage's model with
    ``spm.threads`` (:mod:`lsnmt.data.clean`), an output the stage depends on anyway."""

    data: DataConfig
    sample: SampleConfig = field(default_factory=SampleConfig)
    spm: SpmConfig = field(default_factory=SpmConfig)

    def __post_init__(self) -> None:
        check_downsample(self.data, self.sample)


@dataclass(frozen=True, kw_only=True)
class EncodeView:
    data: DataConfig
    encode: EncodeConfig = field(default_factory=EncodeConfig)
