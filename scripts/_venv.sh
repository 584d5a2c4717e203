# Sourced by scripts/demo, scripts/serve and scripts/test: create or update .venv so nothing else is typed first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python_bin="${PYTHON:-}"
if [ -z "$python_bin" ]; then
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      python_bin="$candidate"
      break
    fi
  done
fi
if [ -z "$python_bin" ]; then
  echo "Threadgate needs Python 3.11 or newer (python3.11, python3.12, python3.13 or python3 on PATH)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  echo "Creating .venv with $python_bin ..." >&2
  "$python_bin" -m venv .venv
fi
# THREADGATE_EXTRAS picks what is installed: "" (the package alone: demo, serve) or "dev" (tests, linters,
# browsers' driver and the agent frameworks the adapters are tested with). A dev install serves both.
extras="${THREADGATE_EXTRAS:-}"
stamp=.venv/.threadgate-installed${extras:+-$extras}
dev_stamp=.venv/.threadgate-installed-dev
fresh() { [ -f "$1" ] && [ ! pyproject.toml -nt "$1" ]; }
if ! fresh "$stamp" && ! fresh "$dev_stamp"; then
  target="."
  [ -n "$extras" ] && target=".[$extras]"
  echo "Installing Threadgate${extras:+ with its $extras extras} into .venv (log: .venv/install.log) ..." >&2
  if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
         .venv/bin/python -m pip install --disable-pip-version-check -e "$target"; } > .venv/install.log 2>&1; then
    tail -n 30 .venv/install.log >&2
    echo "Installing into .venv failed; the whole log is .venv/install.log" >&2
    exit 1
  fi
  touch "$stamp"
fi
