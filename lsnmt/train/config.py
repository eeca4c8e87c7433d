"""The ``train`` section (fairseq's training settings) and the views of the stages that train: ``train@<method>``
and ``search`` (:mod:`lsnmt.view`). Torch-free: ``lsnmt.experiment.params`` composes the section, and the stage table
reads the views."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from lsnmt.data.config import DataConfig
from lsnmt.methods.schema import MethodTable
from lsnmt.typed import Count, FieldError, NonNegative, Positive, Range, Rate, SafeName, Seed
from lsnmt.view import section
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
            raise FieldError(
                "warmup_init_lr", f"{self.warmup_init_lr} is above lr {self.lr}: the warm-up would lower the rate"
            )
        if self.final_checkpoint == "average" and self.keep_last < self.average_last:
            raise FieldError(
                "average_last",
                f"averages {self.average_last} step checkpoints, but keep_last {self.keep_last} keeps fewer",
            )
        if self.nodes > 1 and self.gpus_per_node < 1:
            raise FieldError("nodes", "several nodes need gpus_per_node >= 1")

    @property
    def world_size(self) -> int:
        """DDP ranks of one training run."""
        return max(1, self.gpus_per_node) * self.nodes


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
    method_cfg: MethodTable = section("method_cfg.{method}", default_factory=dict)
    """``{method: its entry}``, typed at load (none for ``naive`` without one: :func:`lsnmt.methods.resolve`)."""
