#!/usr/bin/env bash
# The one command that runs duet: builds the web UI (if it changed) and duet
# itself (release), then starts `duet serve` with the demo agent as the
# default profile. No API key and no network needed. Extra arguments go to
# `duet serve` (see `--help`), e.g. `scripts/run.sh --listen 127.0.0.1:9000`.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { command -v "$1" >/dev/null || { echo "run.sh: '$1' is required ($2)" >&2; exit 1; }; }
need cargo "install Rust from https://rustup.rs"
need npm "install Node.js 20 or newer"

# Rebuild the UI only when its sources are newer than the last build.
if [ ! -f web/dist/index.html ] || [ -n "$(find web/src web/index.html web/package-lock.json -newer web/dist/index.html 2>/dev/null | head -n 1)" ]; then
  echo "run.sh: building the web UI" >&2
  (cd web && { [ -d node_modules ] && [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && npm run build)
fi
exec cargo run --release --locked -p duet-server --bin duet -- serve "$@"
