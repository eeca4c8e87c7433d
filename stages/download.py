"""Stage ``download``: fetch every corpus of the experiment into the raw layout (lsnmt.data.download), then the
FLORES SentencePiece model an spBLEU score of ``evaluate.metrics`` needs (lsnmt.data.spbleu), so that ``evaluate``
never downloads. Reads the data sections and ``evaluate.metrics`` only (lsnmt.data.config)."""

from collections.abc import Sequence

from lsnmt import paths as P
from lsnmt.data import spbleu
from lsnmt.data.config import DataExperiment, load_data_experiment, load_metrics
from lsnmt.data.download import download
from lsnmt.runner.base import guarded, load_or_exit, parse_args


def _download(exp: DataExperiment, metrics: Sequence[str]) -> None:
    download(exp, P.at(P.RAW, exp.name))
    spbleu.fetch_models(tuple(metrics), exp.download)  # sacreBLEU's FLORES model, where it looks for it


def main(argv: list[str] | None = None) -> None:
    args = parse_args("download", argv)
    exp, metrics = load_or_exit(
        "download",
        lambda: (
            load_data_experiment(args.params, args.experiment, DataExperiment),
            load_metrics(args.params, args.experiment),
        ),
    )
    guarded("download", lambda: _download(exp, metrics), (exp.name, None))


if __name__ == "__main__":
    main()
