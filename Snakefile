# One graph, two front ends: this Snakefile and dvc.yaml declare the same stages with the same
# commands and outputs (tests/test_wiring.py holds them together). Every knob lives in params.yaml.
#   snakemake --cores 2                           # the experiment named in params.yaml
#   snakemake --cores 2 --config experiment=iwslt14
#   snakemake --profile slurm                     # on a SLURM cluster (slurm/config.yaml)

from glob import glob


configfile: "params.yaml"

EXP = config["experiment"]
EXPERIMENTS = config["experiments"]
METHODS = config["methods"]
DATA_CODE = ["lsnmt/config.py", "lsnmt/typed.py", "lsnmt/io.py", "lsnmt/languages.py", "lsnmt/cli.py"]
MODEL_CODE = sorted(glob("models/**/*.py", recursive=True))
TRAIN_CODE = sorted(glob("lsnmt/train/*.py"))
DECODE_CODE = sorted(glob("lsnmt/decode/*.py"))
EVAL_CODE = sorted(glob("lsnmt/eval/*.py"))


def section(name):
    return lambda w: EXPERIMENTS[w.exp].get(name, {})


localrules: all, download, params


rule all:
    input:
        expand("results/{exp}/evaluate", exp=EXP),
        "reports/params.csv",


rule download:
    input:
        "stages/download.py", "lsnmt/data/download.py", "lsnmt/data/fetch.py", sorted(glob("lsnmt/data/sources/*.py")),
        "embedded/MANIFEST.tsv", DATA_CODE,
    output:
        directory("data/{exp}/raw"),
    params:
        data=section("data"), download=section("download"),
    log:
        "logs/{exp}/download.log",
    shell:
        "python -m stages.download --experiment {wildcards.exp} --log {log}"


rule prepare:
    input:
        "data/{exp}/raw", "stages/prepare.py", "lsnmt/data/prepare.py", "lsnmt/data/tags.py", DATA_CODE,
    output:
        directory("data/{exp}/prepared"),
    params:
        data=section("data"), prepare=section("prepare"),
    log:
        "logs/{exp}/prepare.log",
    shell:
        "python -m stages.prepare --experiment {wildcards.exp} --log {log}"


rule sample:
    input:
        "data/{exp}/prepared", "stages/sample.py", "lsnmt/data/sample.py", DATA_CODE,
    output:
        directory("data/{exp}/sampled"),
    params:
        sample=section("sample"),
    log:
        "logs/{exp}/sample.log",
    shell:
        "python -m stages.sample --experiment {wildcards.exp} --log {log}"


rule spm:
    input:
        "data/{exp}/prepared", "stages/spm.py", "lsnmt/data/spm.py", "lsnmt/data/tags.py", DATA_CODE,
    output:
        directory("data/{exp}/spm"),
    params:
        spm=section("spm"),
    log:
        "logs/{exp}/spm.log",
    threads: 2
    shell:
        "python -m stages.spm --experiment {wildcards.exp} --log {log}"


rule encode:
    input:
        "data/{exp}/spm", "data/{exp}/sampled", "data/{exp}/prepared", "stages/encode.py", "lsnmt/data/encode.py",
        "lsnmt/data/shards.py", DATA_CODE,
    output:
        directory("data/{exp}/bin"),
    params:
        encode=section("encode"),
    log:
        "logs/{exp}/encode.log",
    threads: 2
    shell:
        "python -m stages.encode --experiment {wildcards.exp} --log {log}"


rule search:
    input:
        "data/{exp}/bin", "stages/search.py", "lsnmt/search.py", "lsnmt/methods.py", "lsnmt/eval/tsne.py", TRAIN_CODE,
        MODEL_CODE, DATA_CODE,
    output:
        directory("results/{exp}/search"),
    params:
        model=section("model"), train=section("train"), search=section("search"),
    log:
        "logs/{exp}/search.log",
    threads: 2
    resources:
        gpu=1,
    shell:
        "python -m stages.search --experiment {wildcards.exp} --log {log}"


rule train:
    input:
        "data/{exp}/bin", "results/{exp}/search", "stages/train.py", "lsnmt/methods.py", TRAIN_CODE, MODEL_CODE,
        DATA_CODE,
    output:
        "results/{exp}/train/{method}/model.pt",
        "results/{exp}/train/{method}/curve.tsv",
    params:
        model=section("model"), train=section("train"),
    log:
        "logs/{exp}/train/{method}.log",
    threads: 2
    resources:
        gpu=1,
    shell:
        "python -m stages.train --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


rule translate:
    input:
        "results/{exp}/train/{method}/model.pt", "data/{exp}/spm", "data/{exp}/bin", "stages/translate.py",
        DECODE_CODE, MODEL_CODE, DATA_CODE,
    output:
        directory("results/{exp}/translate/{method}"),
    params:
        decode=section("decode"),
    log:
        "logs/{exp}/translate/{method}.log",
    threads: 2
    resources:
        gpu=1,
    shell:
        "python -m stages.translate --experiment {wildcards.exp} --method {wildcards.method} --log {log}"


rule evaluate:
    input:
        expand("results/{{exp}}/translate/{method}", method=METHODS),
        expand("results/{{exp}}/train/{method}/model.pt", method=METHODS),
        "data/{exp}/prepared", "data/{exp}/spm", "data/{exp}/bin", "stages/evaluate.py", EVAL_CODE, DATA_CODE,
    output:
        directory("results/{exp}/evaluate"),
    params:
        evaluate=section("evaluate"), methods=METHODS,
    log:
        "logs/{exp}/evaluate.log",
    threads: 2
    shell:
        "python -m stages.evaluate --experiment {wildcards.exp} --log {log}"


rule params:
    input:
        "stages/params.py", "lsnmt/accounting.py", "lsnmt/paper_row.py", "lsnmt/rows_lmsfd.py", "lsnmt/rows_clm.py",
        "lsnmt/rows_lsl.py", MODEL_CODE,
    output:
        "reports/params.csv",
    log:
        "logs/params.log",
    shell:
        "python -m stages.params --log {log}"
