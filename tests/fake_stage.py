"""A stand-in for ``python -m stages.<name> ...`` that writes the stage's declared outputs (from the stage table,
lsnmt/graph/stages.py) and its log, in seconds: lets both front ends run the whole graph for real, so that their
rerun decisions can be tested (tests/test_staleness.py). Run as ``fake_stage.py -m stages.<name> --flag value ...``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the copied repository the front end runs in

from lsnmt.graph.stages import BY_NAME


def main(argv: list[str]) -> None:
    assert argv[0] == "-m" and argv[1].startswith("stages."), argv
    stage = BY_NAME[argv[1].removeprefix("stages.")]
    flags = dict(zip(argv[2::2], argv[3::2], strict=True))
    wild = {"exp": flags.get("--experiment", ""),
            **{k: flags.get(f"--{k}", "") for k in ("method", "expert", "target")}}
    for out in stage.outs:
        path = Path(out.path.format_map(wild))
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{argv}\n")
        else:
            path.mkdir(parents=True, exist_ok=True)
            (path / "done").write_text(f"{argv}\n")
    Path(flags["--log"]).parent.mkdir(parents=True, exist_ok=True)
    Path(flags["--log"]).write_text("fake\n")


if __name__ == "__main__":
    main(sys.argv[1:])
