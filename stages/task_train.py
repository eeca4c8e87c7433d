"""Stage ``task_train``: fine-tune XLM-R for every task x ``task_methods`` x seed, predict the test sets
(lsnmt.tasks.train). Resumable state: ``work/{exp}/tasks``; outputs: ``results/{exp}/tasks``.

    python -m stages.task_train --experiment default --log logs/default/task_train.log

Reads ``task_cfg`` and ``task_method_cfg`` only (:class:`lsnmt.tasks.train_view.TaskTrainView`).
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.methods import resolve_task
from lsnmt.runner.base import Job, run_stage
from lsnmt.tasks.train_view import TaskTrainView

VIEW = TaskTrainView


def _train(view: TaskTrainView, job: Job) -> None:
    from lsnmt.tasks.train import train_tasks  # torch + transformers: imported once the arguments are checked

    exp, where = job.experiment, f"experiments.{job.experiment}.task_method_cfg"
    methods = {m: resolve_task(view.task_method_cfg, m, where) for m in job.lists["task_methods"]}
    train_tasks(view.task_cfg, job.lists["tasks"], methods, P.at(P.TASK_DATA, exp), P.at(P.TASKS, exp),
                P.at(P.TASKS_WORK, exp))
    record.write(P.at(P.TASKS, exp))


def main(argv: list[str] | None = None) -> None:
    run_stage("task_train", VIEW, _train, argv, lists=("tasks", "task_methods"))


if __name__ == "__main__":
    main()
