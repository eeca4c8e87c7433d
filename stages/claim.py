"""Stage ``claim``: the papers' central claim at small scale, measured (lsnmt.claim; ours only).

    python -m stages.claim --experiment default --log logs/default/claim.log

Trains naive and every method of ``experiments.<exp>.claim`` on the synthetic task (work in
``work/{exp}/claim``), writes ``results/{exp}/claim/{summary.json,summary.md,figure.png,figure.pdf}`` and one DVC
metrics file per claim, ``results/{exp}/metrics/claim/{system}-vs-{baseline}.json`` (lsnmt.eval.metrics); an
experiment without a ``claim`` section gets a summary saying "not configured". Reads ``claim`` only
(:class:`lsnmt.claim.config.ClaimView`).
"""

from lsnmt import paths as P
from lsnmt import record
from lsnmt.claim.config import ClaimView
from lsnmt.claim.run import run_claim
from lsnmt.eval.metrics import claim_rows, write_metrics
from lsnmt.runner.base import Job, run_stage

VIEW = ClaimView


def _claim(view: ClaimView, job: Job) -> None:
    exp = job.experiment
    summary = run_claim(view.claim, exp, P.at(P.CLAIM, exp), P.at(P.CLAIM_WORK, exp))
    record.write(P.at(P.CLAIM, exp))
    write_metrics(claim_rows(summary), P.at(P.METRICS, exp, stage="claim"), summary.get("status", "not run"))


def main(argv: list[str] | None = None) -> None:
    run_stage("claim", VIEW, _claim, argv)


if __name__ == "__main__":
    main()
