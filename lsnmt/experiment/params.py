"""Typed view of ``params.yaml``, the project's single source of truth.

``params.yaml`` holds ``experiment`` (the name run by default) and
``experiments``: one mapping per experiment, each with one section per stage.
``Params.load("params.yaml")`` validates the whole file; ``params.get(name)``
returns one :class:`Experiment`. Every section is a frozen, ``kw_only``
dataclass, defined in the folder of the stages that read it (``lsnmt/data/config.py``,
``lsnmt/train/config.py``, ``lsnmt/decode/config.py``, ``lsnmt/eval/config.py``, ``lsnmt/claim/config.py``,
``lsnmt/tasks/config.py``, ``lsnmt/xelm/``, ``models/config/model.py``) and composed here, above them all (issue 41:
no folder imports this one but the stages, the report and the graph); unknown keys, wrong types, unknown language
codes, values out of range (declared beside each field: ``Annotated[int, Range(ge=1)]``), unsafe names and
inconsistent settings raise :class:`~lsnmt.typed.ConfigError` naming the key path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsnmt.claim.config import ClaimConfig
from lsnmt.data.config import (
    ROOT,
    DataConfig,
    DownloadConfig,
    EncodeConfig,
    PrepareConfig,
    SampleConfig,
    SpmConfig,
    check_downsample,
    check_vocab,
)
from lsnmt.decode.config import DecodeConfig
from lsnmt.eval.config import EvaluateConfig
from lsnmt.methods.schema import MethodTable, TaskMethodTable
from lsnmt.methods.schema import check as check_methods
from lsnmt.tasks.config import TaskConfig
from lsnmt.train.config import TrainConfig
from lsnmt.typed import ConfigError, FieldError, SafeName, build, load_yaml
from lsnmt.view import OWN_LISTS
from lsnmt.xelm.config import XelmConfig, check_xelm, expert_ids
from lsnmt.xelm.data_config import LMDataConfig
from models.config.model import ModelConfig


@dataclass(frozen=True, kw_only=True)
class Experiment:
    """One named experiment: every section, each a class of its own in the folder of the stages that read it
    (module docstring), composed here with the checks across sections. A stage reads its view of them
    (:mod:`lsnmt.view`); this whole is what ``Params.load`` checks and what the report, the protocol and the graph
    read."""

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
    method_cfg: MethodTable = field(default_factory=dict)
    """Language-specific methods of this experiment: ``{name: {kind: <models.config.kinds.KINDS key>, ...its
    settings}}``, each built once, at load, into a :class:`lsnmt.methods.schema.Method` (its kind's typed config;
    ``lsnmt.methods.resolve`` looks one up); a name listed in the top-level ``methods`` is ``naive`` or a key
    here."""
    task_method_cfg: TaskMethodTable = field(default_factory=dict)
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
            raise FieldError(
                "lm_data" if self.lm_data is None else "xelm",
                "x-elm needs both sections, lm_data and xelm (none: write both as {})",
            )
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
                    raise FieldError(
                        f"evaluate.comparisons[{i}]", f"{name!r} is not naive, a method_cfg entry or one of its systems"
                    )

    def _check_corpus_names(self) -> None:
        """The analyses' corpora name multi-way sources."""
        multiway = [s.name for s in self.data.sources if "multiway" in s.splits]
        for key, listed in (
            ("evaluate.similarity_sets", self.evaluate.similarity_sets),
            ("evaluate.tsne_sets", self.evaluate.tsne_sets),
        ):
            for i, name in enumerate(listed):
                if name not in multiway:
                    raise FieldError(
                        f"{key}[{i}]",
                        f"{name!r} is not a source of data.sources with a multiway "
                        f"split (known: {', '.join(multiway) or 'none'})",
                    )


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
            raise FieldError(
                wrong[0],
                f"{list(getattr(self, wrong[0]))} differs from what experiment "
                f"{self.experiment!r} runs, {list(want[wrong[0]])}; dvc.yaml runs the top-level job "
                f"lists, so set them to the experiment's: dvc exp run -S experiment={self.experiment} "
                f"{flags}",
            )

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
            check_methods(params)  # what spans sections (the method entries are typed by build)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from None
        return params.with_names()

    def with_names(self) -> Params:
        import dataclasses

        named = {k: dataclasses.replace(v, name=k) for k, v in self.experiments.items()}
        return dataclasses.replace(self, experiments=named)
