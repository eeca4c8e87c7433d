"""Stage ``params``: the papers' #params columns, ours (counted from params.yaml) vs. theirs.

Every row of ``reports/paper/counts.yaml`` names a printed #params cell and the params.yaml configuration that
reproduces it; :mod:`lsnmt.report.paper_counts` builds each on the meta device, and this stage writes
``reports/params.csv`` and the table to its log (the console shows it with ``--print`` or ``LSNMT_VERBOSE=1``).
Rows whose experiment this params.yaml does not define (a trimmed one) are not counted: the log names each, and
the CSV holds the rest.

    python -m stages.params
"""

from __future__ import annotations

import argparse
import csv
import logging

from lsnmt import paths as P
from lsnmt.experiment.params import Params
from lsnmt.io import atomic_write
from lsnmt.report.paper_counts import COLUMNS, format_table, param_table
from lsnmt.runner.base import guarded, setup_logging

OUT = P.PARAMS_CSV

log = logging.getLogger("stages.params")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m stages.params")
    parser.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    parser.add_argument("--log", default=None, help="also write the log to this file")
    parser.add_argument("--print", action="store_true", help="print the table on stdout")
    args = parser.parse_args(argv)
    setup_logging(args.log)
    guarded("params", lambda: _count(args))


def _count(args: argparse.Namespace) -> None:
    params = args.params
    skipped: list[str] = []
    rows = param_table(Params.load(params), skipped=skipped)
    if skipped:
        log.warning(
            "%d of %d rows not counted: %s does not define their experiments: %s",
            len(skipped),
            len(skipped) + len(rows),
            params,
            "; ".join(skipped),
        )
    table = format_table(rows)
    log.info("the papers' parameter counts, ours beside theirs:\n%s", table)
    if args.print:
        print(table)
    with atomic_write(OUT) as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(r.as_csv() for r in rows)
    log.info("wrote %s (%d rows)", OUT, len(rows))


if __name__ == "__main__":
    main()
