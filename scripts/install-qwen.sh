#!/usr/bin/env bash
# Installs Qwen Code at the version duet is tested against into a cache folder
# and prints the path of its `qwen` executable (the only line on stdout, so
# `QWEN=$(scripts/install-qwen.sh)` works). Idempotent: an existing install at
# the pinned version is reused without touching the network.
#
#   scripts/install-qwen.sh            # -> $REPO/.cache/qwen-code-0.15.10/node_modules/.bin/qwen
#   DUET_CACHE_DIR=/somewhere scripts/install-qwen.sh
#                                      # -> /somewhere/qwen-code-0.15.10/node_modules/.bin/qwen
#
# 0.15.10 is the newest release that runs on Node 20 (0.21 and later need
# Node 22); see docs/qwen-code.md. The end-to-end tests
# (cargo nextest run -p duet-server --test agents_e2e) look in the same place.
set -euo pipefail

VERSION=0.15.10
PACKAGE=@qwen-code/qwen-code
NODE_MAJOR_MIN=20

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/qwen-code-$VERSION
bin=$prefix/node_modules/.bin/qwen
manifest=$prefix/node_modules/@qwen-code/qwen-code/package.json

log() { printf 'install-qwen: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The version an install at $1 holds, or nothing.
installed_version() {
    local m=$1/node_modules/@qwen-code/qwen-code/package.json
    [[ -f $m ]] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$m" 2>/dev/null || true
}

command -v node >/dev/null || die "node is not on the PATH; Qwen Code $VERSION needs Node >= $NODE_MAJOR_MIN"
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= NODE_MAJOR_MIN)) || die "Node $(node --version) is too old; Qwen Code $VERSION needs Node >= $NODE_MAJOR_MIN"

if [[ -x $bin && $(installed_version "$prefix") == "$VERSION" ]]; then
    log "Qwen Code $VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

command -v npm >/dev/null || die "npm is not on the PATH"
mkdir -p "$cache"
# Install next to the target and rename at the end, so an interrupted install
# never looks like a finished one.
staging=$(mktemp -d "$cache/.qwen-code-$VERSION.XXXXXX")
trap 'rm -rf "$staging"' EXIT
log "installing $PACKAGE@$VERSION into $prefix"
npm install --prefix "$staging" --no-audit --no-fund --no-update-notifier \
    --save-exact --omit=dev "$PACKAGE@$VERSION" >&2
[[ $(installed_version "$staging") == "$VERSION" ]] || die "npm did not install $PACKAGE@$VERSION"
[[ -x $staging/node_modules/.bin/qwen ]] || die "npm installed no qwen executable"

rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT
"$bin" --version >/dev/null 2>&1 || log "warning: '$bin --version' failed"
log "installed Qwen Code $VERSION"
printf '%s\n' "$bin"
