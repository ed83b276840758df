#!/usr/bin/env bash
# Installs Gemini CLI (@google/gemini-cli) at the version duet is tested
# against into a cache folder and prints the path of its `gemini` executable
# (the only line on stdout, so `GEMINI=$(scripts/install-gemini.sh)` works).
# Idempotent: an existing install at the pinned version is reused without
# touching the network.
#
#   scripts/install-gemini.sh
#       # -> $REPO/.cache/gemini-cli-0.61.0/node_modules/.bin/gemini
#   DUET_CACHE_DIR=/somewhere scripts/install-gemini.sh
#
# What npm installs (0.61.0): one JavaScript bundle (bundle/gemini.js,
# `#!/usr/bin/env node`, engines.node >= 20) and its optional native
# helpers (node-pty prebuilt for the platform, keytar), all from the npm
# registry. docs/gemini-cli.md describes how duet runs it (its own HOME,
# the mock Gemini API, hooks, --acp) and which Node it needs.
set -euo pipefail

VERSION=0.61.0
PACKAGE=@google/gemini-cli
NODE_MAJOR_MIN=20

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/gemini-cli-$VERSION
bin=$prefix/node_modules/.bin/gemini

log() { printf 'install-gemini: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
# shellcheck source=lib/npm-install.sh
. "$repo/scripts/lib/npm-install.sh"

installed_version() { package_version "$1/node_modules/$PACKAGE/package.json"; }

if [[ -x $bin && $(installed_version "$prefix") == "$VERSION" ]]; then
    log "Gemini CLI $VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

use_node "$NODE_MAJOR_MIN"
make_staging "gemini-cli-$VERSION"
npm_install "$PACKAGE@$VERSION"
[[ $(installed_version "$staging") == "$VERSION" ]] || die "npm did not install $PACKAGE@$VERSION"
[[ -x $staging/node_modules/.bin/gemini ]] || die "npm installed no gemini executable"
commit_staging "$prefix"
[[ $(PATH="$(dirname "$node"):$PATH" "$bin" --version 2>/dev/null) == "$VERSION" ]] ||
    log "warning: '$bin --version' did not print $VERSION"
log "installed Gemini CLI $VERSION"
printf '%s\n' "$bin"
