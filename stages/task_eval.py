"""Stage ``task_eval``: F1 of every task prediction, seed averages, win ratio, parameters (lsnmt.tasks.scoring).

    python -m stages.task_eval --experiment default --log logs/default/task_eval.log

Writes ``results/{exp}/task_eval/summary.{json,md}`` and the numbers DVC declares as metrics, one file per task
and system, ``results/{exp}/metrics/task_eval/{task}/{system}.json`` (lsnmt.eval.metrics).
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import task_rows, write_metrics
from lsnmt.runner.stage import run_tasks
from lsnmt.tasks.scoring import evaluate


def _eval(exp, tasks, _methods) -> None:
    name = exp.name
    summary = evaluate(tasks, P.at(P.TASK_DATA, name), P.at(P.TASKS, name), P.at(P.TASK_EVAL, name))
    record.write(P.at(P.TASK_EVAL, name), tasks=record.of(P.at(P.TASKS, name)))
    write_metrics(task_rows(summary), P.at(P.METRICS, name, stage="task_eval"))


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_eval", _eval, argv)


if __name__ == "__main__":
    main()
