"""Stage ``spm``: train the shared sentencepiece model (lsnmt.data.spm)."""

from lsnmt import paths as P
from lsnmt.data.config import DataExperiment
from lsnmt.data.spm import train_spm
from lsnmt.data.stage import run_data


def main(argv: list[str] | None = None) -> None:
    def one(exp: DataExperiment) -> dict:
        return train_spm(exp, P.at(P.PREPARED, exp.name), P.at(P.SPM, exp.name))

    run_data("spm", one, DataExperiment, argv)


if __name__ == "__main__":
    main()
