#!/usr/bin/env bash
# Installs Qwen Code into a cache folder and prints the path of its `qwen`
# executable (the only line on stdout, so `QWEN=$(scripts/install-qwen.sh)`
# works). Idempotent: an existing install of the version is reused without
# touching the network.
#
#   scripts/install-qwen.sh            # 0.15.10, the version the tests pin
#                                      # -> $REPO/.cache/qwen-code-0.15.10/node_modules/.bin/qwen
#   scripts/install-qwen.sh 0.24.4     # -> $REPO/.cache/qwen-code-0.24.4/node_modules/.bin/qwen
#   DUET_CACHE_DIR=/somewhere scripts/install-qwen.sh
#                                      # -> /somewhere/qwen-code-0.15.10/node_modules/.bin/qwen
#
# 0.15.10 is the newest release that runs on Node 20 (0.21 and later need
# Node >= 22); see docs/qwen-code.md. For a version that needs more than the
# `node` on the PATH has, this script installs Node 24 with
# scripts/install-node.sh and uses that node and its npm.
#
# Launching such a version: its `qwen` is `#!/usr/bin/env node`, so either put
# Node 24's directory first on the PATH qwen gets
#   PATH="$(scripts/install-node.sh):$PATH" qwen ...
# or run the bundle with Node 24 directly
#   "$(scripts/install-node.sh)/node" .cache/qwen-code-0.24.4/node_modules/@qwen-code/qwen-code/cli.js ...
# (with QWEN_CODE_NO_RELAUNCH=1; without it Qwen respawns process.execPath,
# which is the right node either way). The end-to-end tests
# (cargo nextest run -p duet-server --test agents_e2e) look in the same place.
set -euo pipefail

DEFAULT_VERSION=0.15.10
VERSION=${1:-$DEFAULT_VERSION}
PACKAGE=@qwen-code/qwen-code

[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+([-.][0-9A-Za-z.]+)?$ ]] || {
    printf 'install-qwen: not a version: %s\n' "$VERSION" >&2
    exit 2
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/qwen-code-$VERSION
bin=$prefix/node_modules/.bin/qwen

log() { printf 'install-qwen: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The version an install at $1 holds, or nothing (read without node, so it
# works before any node is chosen).
installed_version() {
    local m=$1/node_modules/@qwen-code/qwen-code/package.json
    [[ -f $m ]] || return 0
    sed -n 's/^  "version": "\(.*\)",$/\1/p' "$m" | head -n 1
}

# The minimum Node major a version needs: 20 up to 0.20.x, 22 from 0.21 on
# (npm's `engines`, checked again against the installed package below).
node_major_min() {
    local major minor rest
    IFS=. read -r major minor rest <<<"$1"
    if ((major == 0 && minor < 21)); then echo 20; else echo 22; fi
}

if [[ -x $bin && $(installed_version "$prefix") == "$VERSION" ]]; then
    log "Qwen Code $VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

need=$(node_major_min "$VERSION")
node=$(command -v node || true)
npm=(npm)
node_major=0
[[ -n $node ]] && node_major=$("$node" -p 'process.versions.node.split(".")[0]')
if ((node_major < need)); then
    log "Qwen Code $VERSION needs Node >= $need (PATH has ${node:-no node}${node:+ v$node_major}); using Node 24 from scripts/install-node.sh"
    node_dir=$("$repo/scripts/install-node.sh")
    node=$node_dir/node
    # The wheel's bin/npm is a stub that does not run; its npm proper is here.
    npm=("$node" "$node_dir/../lib/node_modules/npm/bin/npm-cli.js")
    export PATH="$node_dir:$PATH"   # for anything npm runs with `node`
else
    command -v npm >/dev/null || die "npm is not on the PATH"
fi

mkdir -p "$cache"
# Install next to the target and rename at the end, so an interrupted install
# never looks like a finished one.
staging=$(mktemp -d "$cache/.qwen-code-$VERSION.XXXXXX")
trap 'rm -rf "$staging"' EXIT
log "installing $PACKAGE@$VERSION into $prefix"
"${npm[@]}" install --prefix "$staging" --no-audit --no-fund --no-update-notifier \
    --save-exact --omit=dev "$PACKAGE@$VERSION" >&2
[[ $(installed_version "$staging") == "$VERSION" ]] || die "npm did not install $PACKAGE@$VERSION"
[[ -x $staging/node_modules/.bin/qwen ]] || die "npm installed no qwen executable"

rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT
PATH="$(dirname "$node"):$PATH" "$bin" --version >/dev/null 2>&1 || log "warning: '$bin --version' failed"
log "installed Qwen Code $VERSION"
printf '%s\n' "$bin"
