#!/usr/bin/env bash
# Installs OpenAI's Codex CLI (@openai/codex) and its ACP adapter
# (@agentclientprotocol/codex-acp) at the versions duet is tested against
# into one cache folder and prints the path of its `codex` executable (the
# only line on stdout, so `CODEX=$(scripts/install-codex.sh)` works); the
# adapter is `codex-acp` in the same bin folder. Idempotent: an existing
# install at the pinned versions is reused without touching the network.
#
#   scripts/install-codex.sh
#       # -> $REPO/.cache/codex-0.171.0/node_modules/.bin/codex
#       #    (and .../node_modules/.bin/codex-acp)
#   DUET_CACHE_DIR=/somewhere scripts/install-codex.sh
#
# What npm installs (0.171.0 / 2.6.0): `codex` is a Node launcher
# (bin/codex.js, engines.node >= 16) for the native executable in the
# platform package, an npm alias (@openai/codex-linux-x64 =
# @openai/codex@0.171.0-linux-x64: codex, 315 MB, plus codex-code-mode-host,
# rg and bwrap; 424 MB in all). The adapter is one JavaScript file (ESM,
# its dependencies @agentclientprotocol/sdk 2.4, vscode-jsonrpc, zod) that
# runs `codex app-server` on stdio. It declares @openai/codex ^0.166.0 and
# runs the one `require` finds unless CODEX_PATH names another; left alone,
# npm nests a second Codex (0.166.0, another 436 MB) under the adapter. The
# `overrides` below make the adapter share 0.171.0 instead, so duet tests
# one Codex through both; docs/codex.md has what was checked with it.
#
# Node: the PATH's node (20 here) runs both; no Node 24 needed.
set -euo pipefail

VERSION=0.171.0
ACP_VERSION=2.6.0
PACKAGE=@openai/codex
ACP_PACKAGE=@agentclientprotocol/codex-acp
NODE_MAJOR_MIN=20

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/codex-$VERSION
bin=$prefix/node_modules/.bin/codex

log() { printf 'install-codex: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=lib/npm-install.sh
. "$repo/scripts/lib/npm-install.sh"

# "ok" when the install at $1 holds both pinned packages, the native Codex
# for this machine, and no second Codex under the adapter.
complete() {
    local m=$1/node_modules
    [[ $(package_version "$m/$PACKAGE/package.json") == "$VERSION" ]] &&
        [[ $(package_version "$m/$ACP_PACKAGE/package.json") == "$ACP_VERSION" ]] &&
        [[ $(package_version "$m/@openai/codex-linux-$(npm_arch)/package.json") == "$VERSION-linux-$(npm_arch)" ]] &&
        [[ ! -e $m/$ACP_PACKAGE/node_modules/@openai/codex ]] &&
        [[ -x $m/.bin/codex && -x $m/.bin/codex-acp ]]
}

# npm's name for this machine's architecture.
npm_arch() {
    case $(uname -m) in
    x86_64) echo x64 ;;
    aarch64 | arm64) echo arm64 ;;
    *) uname -m ;;
    esac
}

if complete "$prefix"; then
    log "Codex $VERSION and $ACP_PACKAGE $ACP_VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

use_node "$NODE_MAJOR_MIN"
make_staging "codex-$VERSION"
# The override is read from the prefix's package.json before npm adds the
# two packages to it.
printf '{"overrides": {"%s": "%s"}}\n' "$PACKAGE" "$VERSION" >"$staging/package.json"
npm_install "$PACKAGE@$VERSION" "$ACP_PACKAGE@$ACP_VERSION"
complete "$staging" || die "npm did not install $PACKAGE@$VERSION (with its native package for $(uname -m)) and $ACP_PACKAGE@$ACP_VERSION sharing it"
commit_staging "$prefix"
[[ $("$bin" --version 2>/dev/null) == "codex-cli $VERSION" ]] ||
    log "warning: '$bin --version' did not print codex-cli $VERSION"
log "installed Codex $VERSION and $ACP_PACKAGE $ACP_VERSION"
printf '%s\n' "$bin"
