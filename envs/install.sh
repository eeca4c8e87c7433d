#!/bin/sh
# Build the project's environment inside a container image (envs/Dockerfile, envs/lsnmt.def), as scripts/env.sh
# does on a machine: a Debian base gets Python >= 3.11 and a C++ compiler (fasttext builds from source), a venv
# in /opt/lsnmt, torch first and explicitly (TORCH_SPEC, default torch==2.13.0 as in env.sh), so that installing
# the rest never pulls a different build, then pyproject.toml's `dependencies` (read from the file, not copied)
# at the exact versions of the lock, envs/constraints.txt (`-c`, as env.sh installs them).
# The project itself is not installed: the rules run `python -m stages.<name>` from the bound repository root.
#   sh envs/install.sh /path/to/pyproject.toml /path/to/constraints.txt
set -eu
PYPROJECT=${1:?usage: install.sh PYPROJECT CONSTRAINTS}
CONSTRAINTS=${2:?usage: install.sh PYPROJECT CONSTRAINTS}
for var in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_CERT; do  # a mirror, wheels, a CA bundle: if given
  eval "[ -n \"\${$var:-}\" ]" || unset "$var"
done
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends python3 python3-venv python3-dev g++ ca-certificates
rm -rf /var/lib/apt/lists/*
python3 -m venv /opt/lsnmt
/opt/lsnmt/bin/python -m pip install --no-cache-dir --upgrade pip
/opt/lsnmt/bin/python -m pip install --no-cache-dir "${TORCH_SPEC:-torch==2.13.0}"
/opt/lsnmt/bin/python -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
  "$PYPROJECT" > /tmp/lsnmt-requirements.txt
/opt/lsnmt/bin/python -m pip install --no-cache-dir -r /tmp/lsnmt-requirements.txt -c "$CONSTRAINTS"
rm /tmp/lsnmt-requirements.txt
/opt/lsnmt/bin/python -c 'import torch, sacrebleu, fasttext, sentencepiece, snakemake; print("torch", torch.__version__)'
