"""Stage ``cluster``: balanced TF-IDF k-means and lang2vec typology clusters, HMR donors (lsnmt.xelm.cluster).

    python -m stages.cluster --experiment default --log logs/default/xelm/cluster.log

Reads ``xelm`` only (:class:`lsnmt.xelm.config.XelmView`): the languages and targets come with ``lm_data``'s output.
"""

from lsnmt import paths as P
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm.cluster import cluster
from lsnmt.xelm.config import XelmView
from lsnmt.xelm.empty_outputs import job_parents, not_configured

VIEW = XelmView


def _cluster(view: XelmView, job: Job) -> None:
    exp, cfg = job.experiment, view.xelm
    out = P.at(P.CLUSTER, exp)
    if cfg is None:
        not_configured(exp, cfg, out)
    else:
        cluster(cfg, P.at(P.LM, exp), out)
    job_parents(exp)


def main(argv: list[str] | None = None) -> None:
    run_stage("cluster", VIEW, _cluster, argv)


if __name__ == "__main__":
    main()
