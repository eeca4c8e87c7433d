"""Stage ``sample``: temperature sampling over training directions (lsnmt.data.sample)."""

from lsnmt.config import Experiment
from lsnmt.data import layout
from lsnmt.data.clean import ratio_masks
from lsnmt.data.sample import sample
from lsnmt.runner.stage import run


def main(argv: list[str] | None = None) -> None:
    def one(exp: Experiment) -> dict:
        prepared = layout.prepared_dir(exp.name)
        return sample(exp, prepared, layout.sampled_dir(exp.name), ratio_masks(exp, prepared, layout.spm_dir(exp.name)))

    run("sample", one, argv)


if __name__ == "__main__":
    main()
