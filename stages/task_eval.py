"""Stage ``task_eval``: F1 of every task prediction, seed averages, win ratio, parameters (lsnmt.tasks.scoring).

    python -m stages.task_eval --experiment default --log logs/default/task_eval.log

Reads no section of params.yaml (:class:`lsnmt.tasks.config.TaskEvalView`), its job lists only. Writes
``results/{exp}/task_eval/summary.{json,md}`` and the numbers DVC declares as metrics, one file per task
and system, ``results/{exp}/metrics/task_eval/{task}/{system}.json`` (lsnmt.eval.metrics).
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import task_rows, write_metrics
from lsnmt.runner.base import Job, run_stage
from lsnmt.tasks.config import TaskEvalView
from lsnmt.tasks.scoring import evaluate

VIEW = TaskEvalView


def _eval(_view: TaskEvalView, job: Job) -> None:
    name = job.experiment
    summary = evaluate(job.lists["tasks"], P.at(P.TASK_DATA, name), P.at(P.TASKS, name), P.at(P.TASK_EVAL, name))
    record.write(P.at(P.TASK_EVAL, name), tasks=record.of(P.at(P.TASKS, name)))
    write_metrics(task_rows(summary), P.at(P.METRICS, name, stage="task_eval"))


def main(argv: list[str] | None = None) -> None:
    run_stage("task_eval", VIEW, _eval, argv, lists=("tasks", "task_methods"))


if __name__ == "__main__":
    main()
