"""Stage ``sample``: temperature sampling over training directions (lsnmt.data.sample).

Reads ``data``, ``sample`` and ``spm`` only (:class:`lsnmt.data.config.SampleView`)."""

from lsnmt import paths as P
from lsnmt.data.clean import ratio_masks
from lsnmt.data.config import SampleView
from lsnmt.data.sample import sample
from lsnmt.runner.base import Job, run_stage

VIEW = SampleView


def _sample(view: SampleView, job: Job) -> dict:
    exp = job.experiment
    prepared = P.at(P.PREPARED, exp)
    return sample(view, prepared, P.at(P.SAMPLED, exp), ratio_masks(view, prepared, P.at(P.SPM, exp)))


def main(argv: list[str] | None = None) -> None:
    run_stage("sample", VIEW, _sample, argv)


if __name__ == "__main__":
    main()
