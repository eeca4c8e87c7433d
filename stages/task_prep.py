"""Stage ``task_prep``: tokenizer and sub-word features of every task in params.yaml's ``tasks`` (lsnmt.tasks.prep).

    python -m stages.task_prep --experiment default --log logs/default/task_prep.log
"""

from lsnmt import paths as P
from lsnmt.runner.stage import run_tasks
from lsnmt.tasks.prep import prep


def main(argv: list[str] | None = None) -> None:
    run_tasks("task_prep", lambda exp, tasks, _methods: prep(exp, tasks, P.at(P.RAW, exp.name),
                                                             P.at(P.TASK_DATA, exp.name)), argv)


if __name__ == "__main__":
    main()
