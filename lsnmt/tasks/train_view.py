"""What ``task_train`` reads (:mod:`lsnmt.view`), apart from ``lsnmt/tasks/config.py``: its methods' entries are
typed at load by the method schema (``lsnmt.methods.schema``), which task_prep and task_eval, reading that module's
views, neither import nor rerun for."""

from __future__ import annotations

from dataclasses import dataclass, field

from lsnmt.methods.schema import TaskMethodTable
from lsnmt.tasks.config import TaskConfig
from lsnmt.typed import SafeName


@dataclass(frozen=True, kw_only=True)
class TaskTrainView:
    """``task_train``: the tasks and their methods' entries (``{name: {kind: lms | lms_fd, ...}}``, typed at load;
    :func:`lsnmt.methods.resolve_task` looks up the methods the stage trains)."""

    task_cfg: dict[SafeName, TaskConfig] = field(default_factory=dict)
    task_method_cfg: TaskMethodTable = field(default_factory=dict)
