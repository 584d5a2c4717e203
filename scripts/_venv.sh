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
  "$python_bin" -m venv --without-pip .venv  # pip comes below, without compiling all of it first
fi
# The pip wheel this Python ships for ensurepip (Debian keeps it in /usr/share/python-wheels); empty if none.
bundled_pip() {
  "$python_bin" -c '
import glob, os, ensurepip
here = os.path.join(os.path.dirname(ensurepip.__file__), "_bundled")
found = sorted(glob.glob(os.path.join(here, "pip-*.whl"))) or sorted(glob.glob("/usr/share/python-wheels/pip-*.whl"))
print(found[-1] if found else "")' 2>/dev/null || true
}
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
  # For a quick first run: modules are compiled as they are first imported, not all at install time, and
  # the package is built with the venv's own setuptools rather than one installed into a throwaway build
  # environment first.
  install=(install --disable-pip-version-check --no-compile)
  tools=(--upgrade pip "setuptools>=77")
  if ! {
    if .venv/bin/python -c "import pip" 2>/dev/null; then
      .venv/bin/python -m pip "${install[@]}" "${tools[@]}"
    elif wheel=$(bundled_pip) && [ -n "$wheel" ]; then
      .venv/bin/python "$wheel/pip" "${install[@]}" "${tools[@]}"  # pip runs from its own wheel
    else
      .venv/bin/python -m ensurepip && .venv/bin/python -m pip "${install[@]}" "${tools[@]}"
    fi &&
    .venv/bin/python -m pip "${install[@]}" --no-build-isolation -e "$target"
  } > .venv/install.log 2>&1; then
    tail -n 30 .venv/install.log >&2
    echo "Installing into .venv failed; the whole log is .venv/install.log" >&2
    echo "(No pip in this Python? On Debian and Ubuntu: apt-get install python3-venv.)" >&2
    exit 1
  fi
  touch "$stamp"
fi
