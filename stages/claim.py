"""Stage ``claim``: the papers' central claim at small scale, measured (lsnmt.claim; ours only).

    python -m stages.claim --experiment default --log logs/default/claim.log

Trains naive and every method of ``experiments.<exp>.claim`` on the synthetic task (work in
``work/{exp}/claim``), writes ``results/{exp}/claim/{summary.json,summary.md,figure.png,figure.pdf}`` and one DVC
metrics file per claim, ``results/{exp}/metrics/claim/{system}-vs-{baseline}.json`` (lsnmt.eval.metrics); an
experiment without a ``claim`` section gets a summary saying "not configured".
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.claim.run import run_claim
from lsnmt.eval.metrics import claim_rows, write_metrics
from lsnmt.runner.stage import run


def _claim(exp) -> None:
    summary = run_claim(exp, P.at(P.CLAIM, exp.name), P.at(P.CLAIM_WORK, exp.name))
    record.write(P.at(P.CLAIM, exp.name))
    write_metrics(claim_rows(summary), P.at(P.METRICS, exp.name, stage="claim"), summary.get("status", "not run"))


def main(argv: list[str] | None = None) -> None:
    run("claim", _claim, argv)


if __name__ == "__main__":
    main()
