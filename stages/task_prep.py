"""Stage ``task_prep``: fetch the dataset of every task in params.yaml's ``tasks`` (``download`` fetches no task
data: editing a task reruns no data stage), then its tokenizer and sub-word features (lsnmt.tasks.prep).

    python -m stages.task_prep --experiment default --log logs/default/task_prep.log

Reads ``task_cfg`` and ``download`` only (:class:`lsnmt.tasks.config.TaskPrepView`).
"""

from lsnmt import paths as P
from lsnmt.runner.base import Job, run_stage
from lsnmt.tasks.config import TaskPrepView
from lsnmt.tasks.prep import prep

VIEW = TaskPrepView


def _prep(view: TaskPrepView, job: Job) -> None:
    exp = job.experiment
    prep(view.task_cfg, job.lists["tasks"], view.download, P.at(P.TASK_RAW, exp), P.at(P.TASK_DATA, exp))


def main(argv: list[str] | None = None) -> None:
    run_stage("task_prep", VIEW, _prep, argv, lists=("tasks",))


if __name__ == "__main__":
    main()
