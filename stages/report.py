"""Stage ``report``: every table and figure of the four papers, ours beside theirs (``lsnmt/report``).

Reads the transcribed paper tables (``reports/paper``), the parameter table (``reports/params.csv``) and
whatever results exist under ``results/`` for every experiment of params.yaml (the selected one is a declared
input; a paper-scale run added later is picked up by re-running this stage), and writes ``reports/README.md``,
``reports/tables`` and ``reports/figures``.

    python -m stages.report --experiment default --log logs/default/report.log
"""

from __future__ import annotations

import dataclasses

from lsnmt import paths as P
from lsnmt.experiment.params import Params
from lsnmt.experiment.stage import stage_args
from lsnmt.report.build import report
from lsnmt.report.runs import Results
from lsnmt.runner.base import guarded


def main(argv: list[str] | None = None) -> None:
    args, exp = stage_args("report", argv)
    params = dataclasses.replace(Params.load(args.params), experiment=exp.name)
    guarded(
        "report",
        lambda: report(Results(params, P.at(P.RESULTS), P.at(P.PARAMS_CSV)), P.at(P.REPORTS)),
        (exp.name, None),
    )


if __name__ == "__main__":
    main()
