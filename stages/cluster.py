"""Stage ``cluster``: balanced TF-IDF k-means and lang2vec typology clusters, HMR donors (lsnmt.xelm.cluster).

    python -m stages.cluster --experiment default --log logs/default/xelm/cluster.log
"""

from lsnmt.runner.stage import run
from lsnmt.xelm import layout as xl
from lsnmt.xelm.cluster import cluster
from lsnmt.xelm.stage import job_parents, not_configured


def _cluster(exp) -> None:
    out = xl.cluster_dir(exp.name)
    if not not_configured(exp.name, exp.lm_data, out):
        cluster(exp, xl.lm_dir(exp.name), out)
    job_parents(exp.name)


def main(argv: list[str] | None = None) -> None:
    run("cluster", _cluster, argv)


if __name__ == "__main__":
    main()
