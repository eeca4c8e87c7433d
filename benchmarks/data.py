"""Wall time, throughput and peak memory of the data stages on a synthetic corpus of any size.

    .venv/bin/python benchmarks/data.py --pairs 5000000 [--workdir /tmp/lsnmt-bench-data] [--json rows.json]

Two chains, each stage in a fresh process (``benchmarks/data_corpus.py`` writes the corpora):

* translation: an English-centric corpus of 8 languages and N pairs in the embedded source format, through
  ``download`` (a local copy), ``prepare``, ``spm``, ``sample`` (with the default's piece-ratio cleaning) and
  ``encode``;
* x-elm: mC4-like documents (``--docs``, default N / 20) in gzipped JSON shards, through ``download``,
  ``prepare``, ``lm_data`` (it trains its own LM tokenizer) and the ``cluster`` stage's TF-IDF (fit on a sample,
  every document embedded and assigned).

Per stage: wall and CPU seconds, CPU / wall, pairs (documents) of the corpus per second and per CPU second, the
peak resident memory of the stage's whole process tree and of its largest process (both sampled every 0.1 s from
``/proc``), its busy threads (those that each ran at least a quarter as long as the busiest: the cores it uses,
whatever else the machine runs), and its wall time over a reference measured in the same run: reading the stage's
input files line by line as text and writing as many bytes as the stage wrote. Run it at two sizes
to see whether memory grows with the corpus; ``docs/benchmarks.md`` has the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = Path(__file__).resolve().parent / "data_corpus.py"
LANGS = ("en", "de", "fr", "ru", "tr", "he", "hi", "vi")
"""English and the seven languages of ``data_corpus.SHARES``: the corpus is written by a child process, so that
this parent imports neither numpy nor lsnmt (see below)."""
STAGE_CODE = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from lsnmt.view import load_view
{imports}
W = Path({work!r})
_, exp = load_view({params!r}, {name!r}, {cls})
wall, cpu = time.perf_counter(), time.process_time()
{call}
wall, own = time.perf_counter() - wall, time.process_time() - cpu
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({{"wall": wall, "cpu": own + kids.ru_utime + kids.ru_stime}}))
"""

TFIDF_CALL = """meta = load_meta(W / 'lm')
langs = list(meta['languages'])
shutil.rmtree(W / 'cluster', ignore_errors=True)
(W / 'cluster').mkdir()
with threadpool_limits(limits=1):  # as the cluster stage runs it
    run_tfidf(exp.xelm, W / 'lm', langs, {x: int(meta['docs']['train'][x]) for x in langs}, W / 'cluster')"""
MT = "bench_mt"
XELM = "bench_xelm"
STAGES: dict[str, tuple[str, str, str, str]] = {
    # name: (experiment, imports, call, class)
    "download": (
        MT,
        "from lsnmt.data.download import download\nfrom lsnmt.data.config import DownloadView",
        "download(exp.data, exp.download, W / 'raw')",
        "DownloadView",
    ),
    "prepare": (
        MT,
        "from lsnmt.data.prepare import prepare\nfrom lsnmt.data.config import PrepareView",
        "prepare(exp, W / 'raw', W / 'prepared')",
        "PrepareView",
    ),
    "spm": (
        MT,
        "from lsnmt.data.spm import train_spm\nfrom lsnmt.data.config import SpmView",
        "train_spm(exp, W / 'prepared', W / 'spm')",
        "SpmView",
    ),
    "sample": (
        MT,
        "from lsnmt.data.sample import sample\nfrom lsnmt.data.clean import ratio_masks\n"
        "from lsnmt.data.config import SampleView",
        "sample(exp, W / 'prepared', W / 'sampled', ratio_masks(exp, W / 'prepared', W / 'spm'))",
        "SampleView",
    ),
    "encode": (
        MT,
        "from lsnmt.data.encode import encode\nfrom lsnmt.data.config import EncodeView",
        "encode(exp, W / 'spm', W / 'sampled', W / 'prepared', W / 'bin')",
        "EncodeView",
    ),
    "x-download": (
        XELM,
        "from lsnmt.data.download import download\nfrom lsnmt.data.config import DownloadView",
        "download(exp.data, exp.download, W / 'raw')",
        "DownloadView",
    ),
    "x-prepare": (
        XELM,
        "from lsnmt.data.prepare import prepare\nfrom lsnmt.data.config import PrepareView",
        "prepare(exp, W / 'raw', W / 'prepared')",
        "PrepareView",
    ),
    "lm_data": (
        XELM,
        "from lsnmt.xelm.data_config import LMDataView\nfrom lsnmt.xelm.lmdata import build_lm_data",
        "build_lm_data(exp.data, exp.spm, exp.lm_data, W / 'prepared', W / 'spm', W / 'lm')",
        "LMDataView",
    ),
    "tfidf": (
        XELM,
        "from lsnmt.experiment.params import Experiment\nimport shutil\nfrom threadpoolctl import "
        "threadpool_limits\nfrom lsnmt.xelm.cluster import run_tfidf\nfrom lsnmt.xelm.lmdata import load_meta",
        TFIDF_CALL,
        "Experiment",
    ),
}
IO: dict[str, tuple[tuple[str, ...], str]] = {
    # name: (input globs under the work folder, output folder) for the I/O reference
    "download": (("corpus/synth/*/*", "corpus/flores/*/*"), "raw"),
    "prepare": (("raw/*/*/*",), "prepared"),
    "spm": (("prepared/train/*/*.tgt",), "spm"),
    "sample": (("prepared/train/*/*",), "sampled"),
    "encode": (("sampled/train/*", "prepared/valid/*", "prepared/test*/*"), "bin"),
    "x-download": (("corpus/mc4/*",), "raw"),
    "x-prepare": (("raw/*/*/*",), "prepared"),
    "lm_data": (("prepared/mono/*/*",), "lm"),
    "tfidf": (("lm/train/*.txt",), "cluster"),
}


@dataclass
class Row:
    stage: str
    items: int
    """Pairs (translation) or documents (x-elm) of the corpus."""
    wall: float
    cpu: float
    peak_mib: float
    """Peak resident memory of the stage's process tree (sampled)."""
    max_process_mib: float
    """Peak resident memory of its largest process (sampled)."""
    reference: float
    """Seconds to read the stage's input as text lines and write as many bytes as it wrote."""
    threads: int = 1
    """Threads that each ran at least a quarter as long as the busiest (:func:`busy_threads`)."""

    @property
    def cores(self) -> float:
        return self.cpu / self.wall

    def line(self) -> str:
        return (
            f"| {self.stage} | {self.items:,} | {self.wall:.1f} | {self.cpu:.1f} | {self.cores:.2f} "
            f"| {self.items / self.wall:,.0f} | {self.items / max(self.cpu, 1e-9):,.0f} | {self.peak_mib:,.0f} "
            f"| {self.max_process_mib:,.0f} | {self.threads} | {self.wall / self.reference:.1f}x |"
        )


HEADER = (
    "| stage | pairs / docs | wall s | CPU s | cores | per s | per CPU s | peak MiB (tree) | largest process "
    "MiB | busy threads | wall / I/O ref |\n|---|---|---|---|---|---|---|---|---|---|---|"
)


LM_JOB = {"updates": 1, "batch_tokens": 2048, "lr": 0.001}
"""The LM trainings x-elm's config requires (never run here)."""


def params(args: argparse.Namespace, corpus: Path) -> dict:
    """The two experiments (written as JSON, which YAML reads)."""
    langs = list(LANGS)
    mt = {
        "data": {
            "languages": langs,
            "train_directions": "en-centric",
            "eval_directions": "en-centric",
            "tags": "target-prefix",
            "sources": [
                {"name": "synth", "kind": "embedded", "path": str(corpus), "splits": ["train"], "heldout": 500},
                {"name": "flores", "kind": "embedded", "path": str(corpus), "splits": ["valid", "test"]},
            ],
        },
        "prepare": {"normalization": "NFKC", "dedup": True, "max_words": 250},
        "sample": {"temperature": 2.0, "seed": 1, "max_piece_ratio": 3.0},
        "spm": {"vocab_size": args.vocab_size, "sentences_per_language": args.spm_sentences, "threads": args.threads},
        "encode": {"workers": args.threads},
    }
    mc4 = str(corpus / "mc4")
    xelm = {
        "data": {
            "languages": langs,
            "train_directions": "none",
            "eval_directions": "none",
            "tags": "none",
            "sources": [
                {"name": "mc4", "kind": "mc4", "path": mc4, "splits": ["train"], "shards": dict.fromkeys(langs, 1)},
                {"name": "mc4_valid", "kind": "mc4", "path": mc4, "splits": ["valid"], "max_pairs": args.valid_docs},
            ],
        },
        "spm": {"threads": args.threads},
        "lm_data": {
            "languages": langs,
            "valid_docs": args.valid_docs,
            "vocab_size": args.vocab_size,
            "spm_sentences": args.lm_spm_docs,
        },
        "xelm": {
            "lm": {"embed_dim": 64, "ffn_dim": 256, "heads": 4, "layers": 2, "block_size": 128},
            "seed": LM_JOB,
            "experts": {**LM_JOB, "k": args.k, "main_k": args.k[-1]},
            "tfidf": {"max_features": 500_000, "fit_docs": args.fit_docs, "iterations": 10, "assign_chunk": 50_000},
            "ensemble": {"top_m": [1]},
        },
    }
    return {"experiment": MT, "experiments": {MT: mt, XELM: xelm}}


def sample_tree(pid: int, ticks: dict[tuple[int, int], int]) -> tuple[int, int]:
    """Resident bytes of ``pid`` and all its descendants, and of the largest of them (0 once gone); ``ticks``
    receives the CPU clock ticks of each of their threads so far."""
    total, largest, todo = 0, 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            rss = int(status.split("VmRSS:")[1].split()[0]) * 1024 if "VmRSS:" in status else 0
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                ticks[(p, int(task.name))] = int(fields[11]) + int(fields[12])  # utime + stime
        except (OSError, ValueError, IndexError):
            continue
        total, largest = total + rss, max(largest, rss)
    return total, largest


def busy_threads(ticks: dict[tuple[int, int], int]) -> int:
    """Threads (of any process of the stage) that each ran at least a quarter as long as the busiest one: how many
    cores the stage kept busy, whatever else the machine ran."""
    top = max(ticks.values(), default=0)
    return sum(t >= top / 4 for t in ticks.values()) if top else 0


def run_stage(name: str, work: Path, params_path: Path) -> tuple[dict, int, int, int]:
    """Run one stage in a child process; return its own figures, the sampled peak RSS of its tree and of its
    largest process (``ru_maxrss`` would carry this parent's peak over fork + exec into the child's) and its busy
    threads."""
    exp, imports, call, cls = STAGES[name]
    code = STAGE_CODE.format(
        root=str(ROOT), imports=imports, work=str(work), params=str(params_path), name=exp, call=call, cls=cls
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'benchmarks'}"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    ticks: dict[tuple[int, int], int] = {}
    peak, largest = 0, 0
    while proc.poll() is None:
        total, one = sample_tree(proc.pid, ticks)
        peak, largest = max(peak, total), max(largest, one)
        time.sleep(0.1)
    out, err = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"stage {name} exited {proc.returncode}:\n{err[-3000:]}")
    return json.loads(out.strip().splitlines()[-1]), peak, largest, busy_threads(ticks)


def io_reference(work: Path, name: str) -> float:
    """Seconds to read the stage's input files as text lines and write as many bytes as its outputs hold."""
    globs, out_dir = IO[name]
    inputs = sorted({p for g in globs for p in work.glob(g) if p.is_file()})
    target = sum(p.stat().st_size for p in (work / out_dir).rglob("*") if p.is_file())
    scratch = work / ".io-reference"
    t, written = time.perf_counter(), 0
    with open(scratch, "w", encoding="utf-8", newline="\n") as out:
        for path in inputs:
            if path.suffix == ".gz":
                import gzip

                fh = gzip.open(path, "rt", encoding="utf-8", newline="\n")
            else:
                fh = open(path, encoding="utf-8", newline="\n")
            with fh:
                for line in fh:
                    if written < target:
                        written += out.write(line)
        block = "x" * ((1 << 20) - 1) + "\n"
        while written < target:
            written += out.write(block[: target - written])
        out.flush()
        os.fsync(out.fileno())
    dt = time.perf_counter() - t
    scratch.unlink()
    return dt


def corpus(args: argparse.Namespace, root: Path) -> None:
    """Write the synthetic corpora once per size (kept for later runs)."""
    done = root / "corpus" / ".complete"
    if done.exists():
        return
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, str(CORPUS), str(root / "corpus"), str(args.pairs), str(args.docs), str(args.valid_docs)],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    done.write_text("")
    print(
        f"synthetic corpora: {args.pairs} pairs, {args.docs} documents in {time.perf_counter() - t:.0f}s",
        file=sys.stderr,
    )


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=5_000_000)
    parser.add_argument("--docs", type=int, default=None, help="mC4-like documents (default: pairs / 20)")
    parser.add_argument("--workdir", default="/tmp/lsnmt-bench-data")
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="spm.threads and encode.workers (default: the cores)"
    )
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--spm-sentences", type=int, default=50_000, help="spm.sentences_per_language")
    parser.add_argument("--lm-spm-docs", type=int, default=5000, help="lm_data.spm_sentences (documents)")
    parser.add_argument("--valid-docs", type=int, default=1000)
    parser.add_argument("--fit-docs", type=int, default=20_000, help="xelm.tfidf.fit_docs")
    parser.add_argument("--k", type=int, nargs="+", default=[4, 8], help="xelm.experts.k")
    parser.add_argument("--only", choices=sorted(STAGES), action="append", help="run only these stages")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    args.docs = args.docs if args.docs is not None else max(args.pairs // 20, args.valid_docs)
    return args


def main(argv: list[str] | None = None) -> list[Row]:
    args = parse(argv)
    root = Path(args.workdir) / f"{args.pairs}"
    corpus(args, root)
    params_path = root / "params.yaml"
    params_path.write_text(json.dumps(params(args, root / "corpus"), indent=1))
    rows = []
    for name in args.only or list(STAGES):
        exp = STAGES[name][0]
        work = root / ("mt" if exp == MT else "xelm")
        work.mkdir(exist_ok=True)
        if not (work / "corpus").exists():
            (work / "corpus").symlink_to(root / "corpus")
        got, peak, largest, threads = run_stage(name, work, params_path)
        items = args.pairs if exp == MT else args.docs
        ref = io_reference(work, name)
        rows.append(Row(name, items, got["wall"], got["cpu"], peak / 2**20, largest / 2**20, ref, threads))
        print(rows[-1].line(), file=sys.stderr, flush=True)
    print(
        f"{args.pairs:,} pairs, {args.docs:,} documents; spm.threads = encode.workers = {args.threads}, "
        f"spm.sentences_per_language {args.spm_sentences:,}, lm_data.spm_sentences {args.lm_spm_docs:,} (documents), "
        f"vocabulary {args.vocab_size:,}, "
        f"tfidf.fit_docs {args.fit_docs:,}, k {args.k}"
    )
    print(HEADER)
    for row in rows:
        print(row.line())
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
