# Source me: create (if missing) and activate the project environment in .venv/.
#   PYTHON=python3.12 ...         interpreter to build the venv with (>= 3.11)
#   TORCH_SPEC="torch==2.5.1"     the torch to install when the venv has none (default: torch==2.13.0)
#   VENV_SYSTEM_SITE=1            let the venv see the system's packages (e.g. a cluster's CUDA torch)
# pip's own output (hundreds of lines on a first install, more where a pip.conf names missing indexes) goes to
# .venv/install.log; the console gets one line per step, and the log's end if pip fails.
set -euo pipefail
PYTHON=${PYTHON:-python3}
_pip() {
  echo "scripts/env.sh: pip $* (log: .venv/install.log)" >&2
  if ! .venv/bin/python -m pip "$@" >> .venv/install.log 2>&1; then
    echo "scripts/env.sh: pip $* failed; the end of .venv/install.log:" >&2
    tail -n 40 .venv/install.log >&2
    return 1
  fi
}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required"'
  "$PYTHON" -m venv ${VENV_SYSTEM_SITE:+--system-site-packages} .venv
  _pip install --quiet --upgrade pip
fi
# torch first, explicitly, so that installing the project never pulls a different (multi-GB) build.
if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
  _pip install --quiet "${TORCH_SPEC:-torch==2.13.0}"
fi
# the stamp of what was installed: the project's dependencies and the lock; either changing reinstalls
stamp=$(cat pyproject.toml envs/constraints.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv/.lsnmt-installed 2>/dev/null)" != "$stamp" ]; then
  _pip install --quiet -e ".[test]" -c envs/constraints.txt  # the lock: exact versions
  echo "$stamp" > .venv/.lsnmt-installed
fi
# shellcheck disable=SC1091
source .venv/bin/activate
set +u
