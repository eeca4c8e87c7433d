"""Stage ``sample``: temperature sampling over training directions (lsnmt.data.sample)."""

from lsnmt import paths as P
from lsnmt.data.clean import ratio_masks
from lsnmt.data.config import DataExperiment
from lsnmt.data.sample import sample
from lsnmt.data.stage import run_data


def main(argv: list[str] | None = None) -> None:
    def one(exp: DataExperiment) -> dict:
        prepared = P.at(P.PREPARED, exp.name)
        return sample(exp, prepared, P.at(P.SAMPLED, exp.name), ratio_masks(exp, prepared, P.at(P.SPM, exp.name)))

    run_data("sample", one, DataExperiment, argv)


if __name__ == "__main__":
    main()
