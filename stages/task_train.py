"""Stage ``task_train``: fine-tune XLM-R for every task x ``task_methods`` x seed, predict the test sets
(lsnmt.tasks.train). Resumable state: ``work/{exp}/tasks``; outputs: ``results/{exp}/tasks``.

    python -m stages.task_train --experiment default --log logs/default/task_train.log
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner.stage import run_tasks


def _train(exp, tasks, methods) -> None:
    from lsnmt.tasks.train import train_tasks  # torch + transformers: imported once the arguments are checked

    name = exp.name
    train_tasks(exp, tasks, methods, P.at(P.TASK_DATA, name), P.at(P.TASKS, name), P.at(P.TASKS_WORK, name))
    record.write(P.at(P.TASKS, name))


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_train", _train, argv)


if __name__ == "__main__":
    main()
