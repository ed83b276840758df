#!/usr/bin/env bash
# Installs terminado (Jupyter's terminal server, from PyPI) into a venv under
# .cache/terminado-venv for `duet-bench --peer terminado`. Idempotent. Prints
# the venv's python on its last line. Needs python3 with venv (Debian:
# python3-venv).
set -euo pipefail

VERSION=0.18.1
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="$ROOT/.cache/terminado-venv"
PY="$VENV/bin/python"

if ! "$PY" -c "import terminado, sys; sys.exit(terminado.__version__ != '$VERSION')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "terminado==$VERSION" >&2
fi
"$PY" -c "import terminado, tornado; print('terminado', terminado.__version__, 'tornado', tornado.version)" >&2
echo "$PY"
