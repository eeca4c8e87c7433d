"""Stage ``task_eval``: F1 of every task prediction, seed averages, win ratio, parameters (lsnmt.tasks.evaluate).

    python -m stages.task_eval --experiment default --log logs/default/task_eval.log

Writes ``results/{exp}/task_eval/summary.{json,md}``, the headline numbers DVC declares as metrics,
``results/{exp}/metrics/task_eval.json``, and their per-system detail,
``results/{exp}/metrics/task_eval/{task}/{system}.json`` (lsnmt.eval.metrics).
"""

from pathlib import Path

from lsnmt.data import layout
from lsnmt.eval.metrics import task_rows, write_metrics
from lsnmt.runner.stage import run_tasks
from lsnmt.tasks.evaluate import evaluate


def _eval(exp, tasks, _methods) -> None:
    results = Path("results") / exp.name
    summary = evaluate(tasks, layout.tasks_dir(exp.name), results / "tasks", results / "task_eval")
    write_metrics(exp.name, "task_eval", task_rows(summary))


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_eval", _eval, argv)


if __name__ == "__main__":
    main()
