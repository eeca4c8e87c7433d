"""Stage ``encode``: token-id shards for every split (lsnmt.data.encode)."""

from lsnmt.data import layout
from lsnmt.data.encode import encode
from lsnmt.runner.stage import run


def _encode(exp) -> None:
    encode(exp, layout.spm_dir(exp.name), layout.sampled_dir(exp.name), layout.prepared_dir(exp.name),
           layout.bin_dir(exp.name))


def main(argv: list[str] | None = None) -> None:
    run("encode", _encode, argv)


if __name__ == "__main__":
    main()
