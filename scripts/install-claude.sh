#!/usr/bin/env bash
# Installs Claude Code at the version duet is tested against into a cache
# folder and prints the path of its `claude` executable (the only line on
# stdout, so `CLAUDE=$(scripts/install-claude.sh)` works). Idempotent: an
# existing install at the pinned version is reused without touching the
# network.
#
#   scripts/install-claude.sh          # -> $REPO/.cache/claude-code-2.1.330/node_modules/.bin/claude
#   DUET_CACHE_DIR=/somewhere scripts/install-claude.sh
#                                      # -> /somewhere/claude-code-2.1.330/node_modules/.bin/claude
#
# Pinned: an unpinned install picks whatever npm resolves that day (2.1.197
# once). docs/claude-code.md describes how duet runs this version (hooks,
# offline environment, seeded ~/.claude.json).
#
# The package is a thin wrapper: npm also installs the platform's package
# (@anthropic-ai/claude-code-linux-x64, a ~380 MB native executable), and the
# wrapper's postinstall hard-links it over bin/claude.exe. Claude Code itself
# therefore runs without Node; Node and npm only install it. The package
# declares engines.node >= 22, so npm 11 on Node 20 prints an EBADENGINE
# warning, which is harmless here (checked on Node 20.20). Should the
# postinstall not run (npm --ignore-scripts), it is run here.
set -euo pipefail

VERSION=2.1.330
PACKAGE=@anthropic-ai/claude-code
NODE_MAJOR_MIN=18

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/claude-code-$VERSION
bin=$prefix/node_modules/.bin/claude

log() { printf 'install-claude: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# The version an install at $1 holds, or nothing.
installed_version() {
    local m=$1/node_modules/@anthropic-ai/claude-code/package.json
    [[ -f $m ]] || return 0
    node -e 'process.stdout.write(String(require(process.argv[1]).version || ""))' "$m" 2>/dev/null || true
}

# Whether the executable under $1 is the native one at $VERSION (not the
# placeholder the package ships before its postinstall).
runs() {
    [[ $("$1/node_modules/.bin/claude" --version 2>/dev/null) == "$VERSION "* ]]
}

command -v node >/dev/null || die "node is not on the PATH; Claude Code $VERSION needs Node >= $NODE_MAJOR_MIN"
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= NODE_MAJOR_MIN)) || die "Node $(node --version) is too old; Claude Code $VERSION needs Node >= $NODE_MAJOR_MIN"

if [[ -x $bin && $(installed_version "$prefix") == "$VERSION" ]] && runs "$prefix"; then
    log "Claude Code $VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

command -v npm >/dev/null || die "npm is not on the PATH"
mkdir -p "$cache"
# Install next to the target and rename at the end, so an interrupted install
# never looks like a finished one.
staging=$(mktemp -d "$cache/.claude-code-$VERSION.XXXXXX")
trap 'rm -rf "$staging"' EXIT
log "installing $PACKAGE@$VERSION into $prefix"
npm install --prefix "$staging" --no-audit --no-fund --no-update-notifier \
    --save-exact --omit=dev "$PACKAGE@$VERSION" >&2
[[ $(installed_version "$staging") == "$VERSION" ]] || die "npm did not install $PACKAGE@$VERSION"
[[ -x $staging/node_modules/.bin/claude ]] || die "npm installed no claude executable"
if ! runs "$staging"; then
    log "running the package's postinstall (npm did not)"
    (cd "$staging/node_modules/@anthropic-ai/claude-code" && node install.cjs) >&2
    runs "$staging" || die "the claude executable does not run or is not $VERSION (is the native package for $(uname -m) installed?)"
fi

rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT
log "installed Claude Code $VERSION"
printf '%s\n' "$bin"
