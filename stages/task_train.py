"""Stage ``task_train``: fine-tune XLM-R for every task x ``task_methods`` x seed, predict the test sets
(lsnmt.tasks.train). Resumable state: ``work/{exp}/tasks``; outputs: ``results/{exp}/tasks``.

    python -m stages.task_train --experiment default --log logs/default/task_train.log
"""

from pathlib import Path

from lsnmt.data import layout
from lsnmt.runner.stage import run_tasks


def _train(exp, tasks, methods) -> None:
    from lsnmt.tasks.train import train_tasks  # torch + transformers: imported once the arguments are checked

    train_tasks(exp, tasks, methods, layout.tasks_dir(exp.name), Path("results") / exp.name / "tasks",
                Path("work") / exp.name / "tasks")


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_train", _train, argv)


if __name__ == "__main__":
    main()
