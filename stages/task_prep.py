"""Stage ``task_prep``: fetch the dataset of every task in params.yaml's ``tasks`` (``download`` fetches no task
data: editing a task reruns no data stage), then its tokenizer and sub-word features (lsnmt.tasks.prep).

    python -m stages.task_prep --experiment default --log logs/default/task_prep.log

Reads ``task_cfg`` and ``download`` (where archives are cached, retries).
"""

from lsnmt import paths as P
from lsnmt.runner.stage import run_tasks
from lsnmt.tasks.prep import prep


def _prep(exp, tasks, _methods) -> None:
    prep(exp.task_cfg, tasks, exp.download, P.at(P.TASK_RAW, exp.name), P.at(P.TASK_DATA, exp.name))


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_prep", _prep, argv)


if __name__ == "__main__":
    main()
