"""x-elm's ``xelm`` section: the decoder-only LM, budgets, clustering, ensembles, HMR, ICL: what the LM trainings
and evaluations read besides ``lm_data`` (:mod:`lsnmt.xelm.data_config`: the languages, the seed's origin, the LMs'
text and tokenizer). Two sections in two modules, so that editing an LM training setting, or its schema here,
reruns no ``lm_data`` (DVC and Snakemake track sections and the files a stage imports).

Every field names the paper's section or table it follows; where the paper is silent the choice is marked
*(choice)* and explained. The expert jobs of an experiment are enumerated by :func:`expert_ids`; params.yaml's
top-level ``xelm_experts`` / ``xelm_targets`` lists (what DVC's ``foreach`` and Snakemake iterate over) must
equal them (``lsnmt.experiment.params.Params.load`` checks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated, Literal

from lsnmt.data.config import DownloadConfig
from lsnmt.typed import Count, FieldError, Range, Seed
from lsnmt.xelm.data_config import LMDataConfig
from models.config.lm import LMConfig

ALLOCATIONS = ("tfidf", "typology")
"""x-elm Sec. 3.2: balanced TF-IDF clustering of documents, linguistic typology clustering of languages."""
DENSE = "dense-k1-e0"
"""The k = 1 dense baseline (Sec. 5.3): trained like an expert on all the data with the whole budget."""
_ID = re.compile(r"^(dense|tfidf|typology)-k(\d+)-e(\d+)$")


@dataclass(frozen=True, kw_only=True)
class LMTrainConfig:
    """One training run of the LM (seed, expert, HMR expert, dense LAPT): AdamW and a learning-rate schedule."""

    updates: int
    """Optimizer updates (x-elm Table 4: 20,000 for the 10.5B-token budget, 40,000 for 21B)."""
    batch_tokens: int
    """Tokens per update of a k = 1 model; an expert of a k-expert set gets ``batch_tokens / k`` so that every
    set sees the same total tokens in the same number of updates (x-elm Table 4 / App. A.1)."""
    lr: float
    """Peak learning rate (x-elm App. A.1: 1.5e-4)."""
    schedule: Literal["linear", "inverse_sqrt", "constant"] = "linear"
    """x-elm App. A.1: linear decay (to ``end_lr`` at the last update, after the warm-up)."""
    warmup_updates: int = 0
    """*(choice)* x-elm states no warm-up for continued training; a model trained from scratch needs one."""
    warmup_init_lr: float = 0.0
    end_lr: float = 0.0
    adam_betas: tuple[float, ...] = (0.9, 0.95)
    """Adam's betas. x-elm prints no optimizer values (Sec. 5.2 only says it keeps "the training parameters from
    the original XGLM training procedure" unless stated), so the authors' released sweep, which ran the
    experiments, holds for betas, eps, weight decay, clipping and precision: blvns/x-elm
    ``metaseq/fb_sweep/ft_stream.py`` (``--adam-betas
    "(0.9, 0.95)"``, ``--adam-eps 1e-6``, ``--weight-decay`` only when ``--wd`` > 0, its default 0, ``--clip-norm``
    1.0, ``--fp16`` with ``--fp16-init-scale 128``), as ``metaseq/scripts/train_xlbtm.sh`` runs it (no ``--wd``,
    no ``--bf16``). The ``scratch`` seed, our addition, trains with the same recipe (choice)."""
    adam_eps: float = 1e-6
    weight_decay: float = 0.0
    clip_norm: float = 1.0
    max_tokens: int | None = None
    """Tokens per forward pass, the update accumulated over several (``None``: the whole update at once)."""
    precision: Literal["fp32", "bf16", "fp16"] = "fp32"
    """Autocast dtype on GPU (CPU always runs fp32). ``fp16`` (the released sweep's ``--fp16``) scales the loss
    dynamically (``torch.amp.GradScaler`` from ``fp16_init_scale``; an update whose gradients overflow is skipped
    and not counted, as metaseq / fairseq do)."""
    fp16_init_scale: float = 128.0
    """Initial loss scale with ``fp16`` (ft_stream.py: ``--fp16-init-scale 128``)."""
    seed: Seed = 1
    log_every: int = 10
    save_every: int = 100
    """Resumable checkpoint every N updates (``work/{exp}/xelm/ckpt/{job}``)."""

    def __post_init__(self) -> None:
        for name in ("updates", "batch_tokens"):
            if getattr(self, name) < 1:
                raise FieldError(name, f"must be >= 1, got {getattr(self, name)}")
        if len(self.adam_betas) != 2:
            raise FieldError("adam_betas", f"expected two values, got {list(self.adam_betas)}")
        if self.schedule == "inverse_sqrt" and self.warmup_updates < 1:
            raise FieldError("warmup_updates", "inverse_sqrt needs warmup_updates >= 1")


@dataclass(frozen=True, kw_only=True)
class ExpertsConfig(LMTrainConfig):
    """x-BTM (Sec. 3.1): k experts branched from the seed, each trained on one cluster, per k and allocation."""

    k: tuple[int, ...] = (4, 8, 16)
    """Expert counts trained for both allocations (x-elm Fig. 3: k in {1, 4, 8, 16}; k = 1 is ``dense``)."""
    main_k: int = 8
    """The k of Tables 1, 2, 8 and of the HMR donors (x-elm Sec. 6.1: k = 8 is best)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for i, k in enumerate(self.k):
            if k < 2:
                raise FieldError(f"k[{i}]", f"expert counts must be >= 2 (k = 1 is the dense baseline), got {k}")
        if len(set(self.k)) != len(self.k):
            raise FieldError("k", "duplicate expert counts")
        if self.main_k not in self.k:
            raise FieldError("main_k", f"{self.main_k} is not one of k {list(self.k)}")


@dataclass(frozen=True, kw_only=True)
class TfidfConfig:
    """Balanced TF-IDF k-means (x-elm Sec. 3.2, after c-BTM, Gururangan et al. 2023)."""

    max_features: int = 500_000
    """Word-level TF-IDF vocabulary (c-BTM / x-elm's clusterer: 500K)."""
    svd_dim: int = 100
    """Truncated SVD dimension before L2 normalisation (c-BTM: 100)."""
    number_normalizer: bool = True
    """Map every token that starts with a digit to ``#NUMBER`` (x-elm's clusterer)."""
    stop_words: Literal["none", "english"] = "none"
    """x-elm removes spaCy stop words of 15 languages; spaCy is not a dependency here, so none are removed by
    default (``english``: scikit-learn's list)."""
    fit_docs: int = 100_000
    """Documents (a seeded sample) the vectorizer, the SVD and the k-means centroids are fitted on."""
    iterations: int = 20
    """Lloyd iterations at most (c-BTM: ``iter_limit=20``); stops early when the assignment is stable."""
    assign: Literal["balanced", "nearest"] = "balanced"
    """How every training document gets its cluster: a balanced assignment (equal cluster sizes, exact min-cost
    transport per chunk) or the nearest centroid."""
    assign_chunk: int = 50_000
    """Documents per balanced-assignment problem (c-BTM balances batches of 50,000), drawn from a seeded
    permutation of the whole corpus: x-elm shuffles every mC4 shard across languages before its balanced
    batches, so a chunk mixes languages (in language order each chunk would be split 1/k over the experts)."""
    seed: Seed = 1


@dataclass(frozen=True, kw_only=True)
class TypologyConfig:
    """Linguistic typology clustering with lang2vec / URIEL (x-elm Sec. 3.2, Fig. 2)."""

    feature_set: str = "syntax_average"
    """lang2vec feature set(s) (``+`` concatenates, ``|`` unites); x-elm's released clustering uses
    ``syntax_average``."""
    minimal: bool = True
    """Drop features that are constant over the languages (lang2vec ``minimal=True``, as x-elm's code)."""
    linkage: Literal["centroid", "single"] = "single"
    """Distance between two clusters: the minimum over their members (``single``, x-elm's released
    ``lang_clustering.py``, ``_min_cosine_dist``; its centroid code is commented out) or between their centroids
    (``centroid``, one reading of Sec. 3.2's "minimum distances between cluster centroids"). Both give the same
    eight pairs at k = 8, but not the same k = 4 sets: ``single`` gives {en es bg ru} {ja ko tr zh} {de el fr ar}
    {hi ur vi sw}, the sets the authors' experts trained on (the cluster maps hard-coded in their
    ``xl-btm/cluster_dists.py``, plotted in Figure 5), ``centroid`` {ar fr sw vi} and {de el hi ur} instead.
    Default ``single``: the hierarchy of the released experiments (Figure 2's image is not machine-readable here;
    the released maps are what its k = 4 / 8 levels trained)."""


@dataclass(frozen=True, kw_only=True)
class EnsembleConfig:
    """TF-IDF expert ensembles (x-elm Sec. 3.3): alpha_e ∝ exp(-dist(x_<t, c_e)^2 / T), top-m sparsification."""

    temperature: float = 0.1
    """T (c-BTM's evaluation default, also x-elm's)."""
    top_m: tuple[int, ...] = (2, 4)
    """Sparse ensembles evaluated besides the full one at ``main_k`` (x-elm Table 8: m = 2, 4 of 8)."""

    def __post_init__(self) -> None:
        if self.temperature <= 0:
            raise FieldError("temperature", f"must be > 0, got {self.temperature}")


@dataclass(frozen=True, kw_only=True)
class HMRConfig(LMTrainConfig):
    """Hierarchical multi-round training for new languages (x-elm Sec. 4, 6.3) and its dense LAPT baseline.

    One HMR expert per target (``lm_data.targets``), branched from the ``main_k`` typology expert of the target's
    donor and trained on donor + target text with ``batch_tokens / len(targets)`` per update; dense LAPT continues
    the k = 1 dense model on all targets and donors with ``batch_tokens`` per update, so both use the same compute
    *(choice: the paper does not give the HMR budget)*.
    """

    updates: int = 0
    batch_tokens: int = 0
    lr: float = 1.5e-4
    donors: dict[str, str] = field(default_factory=dict)
    """target (of ``lm_data.targets``) -> donor; a target not listed gets the seen language nearest by the typology
    distance (x-elm Sec. 6.3 "assigned with the language similarity metric used for typological clustering")."""

    def __post_init__(self) -> None:
        pass  # the budget is checked only where there is something to adapt to: check_xelm, with lm_data.targets


@dataclass(frozen=True, kw_only=True)
class ICLConfig:
    """In-context evaluation (x-elm Sec. 7, App. A.2, Table 3); XGLM's prompts (Table 6)."""

    tasks: tuple[Literal["xnli", "xstorycloze", "pawsx"], ...] = ()
    download: bool = False
    """Fetch missing datasets from their published URLs into ``path`` (``false``: use what ``path`` holds;
    an absent dataset is reported as "not run")."""
    path: str = "work/icl"
    """Directory with the datasets' archives or extracted files (``xnli/``, ``xstorycloze/``, ``pawsx/``)."""
    shots: int = 8
    """Few-shot demonstrations, always English (x-elm Sec. 7.1); zero-shot always runs too."""
    runs: int = 5
    """Few-shot runs with different demonstrations, averaged."""
    examples: int = 1000
    """Random evaluation examples per language (x-elm Sec. 7.1: 1,000)."""
    seed: Seed = 42


@dataclass(frozen=True, kw_only=True)
class XelmConfig:
    """The ``xelm`` section: the LMs and their trainings and evaluations (with ``lm_data``: :func:`check_xelm`)."""

    lm: LMConfig
    seed: LMTrainConfig
    """Training of the ``scratch`` seed (unused with ``init: xglm``)."""
    experts: ExpertsConfig
    tfidf: TfidfConfig = field(default_factory=TfidfConfig)
    typology: TypologyConfig = field(default_factory=TypologyConfig)
    ensemble: EnsembleConfig = field(default_factory=EnsembleConfig)
    hmr: HMRConfig = field(default_factory=HMRConfig)
    icl: ICLConfig = field(default_factory=ICLConfig)
    threads: int = 1
    """CPU threads of each LM job (``torch.set_num_threads``; a GPU run ignores it). Snakemake runs expert jobs
    side by side, so one thread each uses the cores without oversubscribing them."""
    gpus_per_node: Annotated[int, Range(ge=0)] = 1
    """GPUs of each LM training job (seed, expert, HMR expert, LAPT) per node, one DDP rank each: more than one
    and the stage runs itself under ``torchrun`` (:mod:`lsnmt.runner.launch`; gloo ranks on a machine without
    CUDA). Each rank trains ``1 / W`` of every update's blocks, so the update (``batch_tokens``) is the same for
    any world ``W``. The authors' ``metaseq/scripts/train_xlbtm.sh`` takes ``NUM_NODES`` and ``NUM_GPUS`` per
    expert; the paper prints neither. ``0``: the job asks for no GPU."""
    nodes: Count = 1
    """Nodes of each LM training job; more than one needs a SLURM allocation (``snakemake --profile slurm``)."""

    @property
    def world_size(self) -> int:
        """DDP ranks of one LM training job."""
        return max(1, self.gpus_per_node) * self.nodes

    def __post_init__(self) -> None:
        if self.nodes > 1 and self.gpus_per_node < 1:
            raise FieldError("nodes", "several nodes need gpus_per_node >= 1")
        for i, m in enumerate(self.ensemble.top_m):
            if not 1 <= m < self.experts.main_k:
                raise FieldError(f"ensemble.top_m[{i}]", f"m must be in [1, main_k = {self.experts.main_k}), got {m}")
        block = self.lm.block_size
        budgets = [("seed.batch_tokens", self.seed.batch_tokens, 1)]
        budgets += [("experts.batch_tokens", self.experts.batch_tokens, k) for k in (1, *self.experts.k)]
        for name, tokens, parts in budgets:
            if tokens % (parts * block):
                raise FieldError(name, f"{tokens} tokens do not split into {parts} part(s) of whole "
                                 f"{block}-token blocks (lm.block_size)")


def check_xelm(lm: LMDataConfig, x: XelmConfig, data_languages: tuple[str, ...]) -> None:
    """The two x-elm sections agree: HMR's budget and donors fit ``lm.targets``, each k is reachable by the
    typology hierarchy of the pretraining languages. Raises :class:`FieldError` naming ``xelm.<key>``."""
    if lm.targets:  # the budget is needed only when there is something to adapt to
        try:
            LMTrainConfig.__post_init__(x.hmr)
        except FieldError as exc:
            raise FieldError(f"xelm.hmr.{exc.field}", exc.message) from None
        tokens, parts, block = x.hmr.batch_tokens, len(lm.targets), x.lm.block_size
        if tokens % (parts * block):
            raise FieldError("xelm.hmr.batch_tokens", f"{tokens} tokens do not split into {parts} part(s) of whole "
                             f"{block}-token blocks (lm.block_size)")
    for t, d in x.hmr.donors.items():
        if t not in lm.targets:
            raise FieldError(f"xelm.hmr.donors.{t}", f"{t!r} is not one of lm_data.targets {list(lm.targets)}")
        if lm.languages and d not in lm.languages:
            raise FieldError(f"xelm.hmr.donors.{t}", f"donor {d!r} is not one of lm_data.languages")
    n = len(lm.seen(data_languages))
    sizes = hierarchy_sizes(n)
    for i, k in enumerate(x.experts.k):
        if k not in sizes:
            raise FieldError(f"xelm.experts.k[{i}]", f"{n} languages merge pairwise into {sizes} clusters, "
                             f"not {k} (x-elm Sec. 3.2's balanced hierarchy)")


def hierarchy_sizes(n: int) -> list[int]:
    """Cluster counts of a balanced pairwise hierarchy over n languages: n, ceil(n/2), ..., 1."""
    out = [n]
    while out[-1] > 1:
        out.append((out[-1] + 1) // 2)
    return out


def expert_ids(cfg: XelmConfig) -> list[str]:
    """Every expert job: ``dense-k1-e0``, then ``<allocation>-k<k>-e<i>`` for each allocation and k."""
    return [DENSE] + [f"{a}-k{k}-e{e}" for a in ALLOCATIONS for k in cfg.experts.k for e in range(k)]


@dataclass(frozen=True)
class ExpertId:
    allocation: Literal["dense", "tfidf", "typology"]
    k: int
    index: int

    @classmethod
    def parse(cls, name: str) -> ExpertId:
        m = _ID.match(name)
        if not m:
            raise ValueError(f"{name!r} is not an expert id (dense-k1-e0 or <tfidf|typology>-k<k>-e<i>)")
        return cls(m.group(1), int(m.group(2)), int(m.group(3)))  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"{self.allocation}-k{self.k}-e{self.index}"


@dataclass(frozen=True, kw_only=True)
class XelmView:
    """What ``cluster`` and ``lm_eval`` read (:mod:`lsnmt.view`): the ``xelm`` section only; the languages and
    targets come with ``lm_data``'s output (``meta.json``), which they depend on."""

    xelm: XelmConfig | None = None
    """``None``: the experiment runs no x-elm stage (the stage writes "not configured")."""


@dataclass(frozen=True, kw_only=True)
class IclView:
    """What ``lm_icl`` reads: ``download`` (retries and timeout of a dataset's download) and ``xelm``."""

    download: DownloadConfig = field(default_factory=DownloadConfig)
    xelm: XelmConfig | None = None


@dataclass(frozen=True, kw_only=True)
class LMTrainView:
    """What ``lm_seed``, ``lm_hmr`` and ``lm_lapt`` read (:mod:`lsnmt.view`): ``lm_data`` (the seed's origin, the HMR
    targets) and ``xelm`` (the LM and its trainings); ``lm_expert`` reads ``xelm`` only (:class:`XelmView`)."""

    lm_data: LMDataConfig | None = None
    """``None`` (with ``xelm``): the experiment runs no x-elm stage (the stage writes "not configured")."""
    xelm: XelmConfig | None = None

    def __post_init__(self) -> None:
        if (self.lm_data is None) != (self.xelm is None):
            raise FieldError("lm_data" if self.lm_data is None else "xelm", "x-elm needs both sections, lm_data "
                             "and xelm (none: write both as {})")

    @property
    def targets(self) -> tuple[str, ...]:
        """The HMR targets, ``lm_data.targets`` (none without x-elm)."""
        return () if self.lm_data is None else self.lm_data.targets
