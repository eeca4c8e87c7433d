"""Stage ``download``: fetch every corpus of the experiment into the raw layout (lsnmt.data.download), then the
FLORES SentencePiece model an spBLEU score of ``evaluate.metrics`` needs (lsnmt.data.spbleu), so that ``evaluate``
never downloads. Reads ``data``, ``download`` and ``evaluate.metrics`` only (:class:`lsnmt.data.config.DownloadView`);
the tasks' datasets are ``task_prep``'s."""

from lsnmt import paths as P
from lsnmt.data import spbleu
from lsnmt.data.config import DownloadView
from lsnmt.data.download import download
from lsnmt.runner.base import Job, run_stage

VIEW = DownloadView


def _download(view: DownloadView, job: Job) -> None:
    download(view.data, view.download, P.at(P.RAW, job.experiment))
    spbleu.fetch_models(view.metrics, view.download)  # sacreBLEU's FLORES model, where it looks for it


def main(argv: list[str] | None = None) -> None:
    run_stage("download", VIEW, _download, argv)


if __name__ == "__main__":
    main()
