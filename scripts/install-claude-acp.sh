#!/usr/bin/env bash
# Installs Claude Code's ACP adapter (@agentclientprotocol/claude-agent-acp,
# the successor of @zed-industries/claude-code-acp) at the version duet is
# tested against into a cache folder and prints the path of its
# `claude-agent-acp` executable (the only line on stdout, so
# `ACP=$(scripts/install-claude-acp.sh)` works). Idempotent: an existing
# install at the pinned version is reused without touching the network.
#
#   scripts/install-claude-acp.sh
#       # -> $REPO/.cache/claude-agent-acp-0.101.0/node_modules/.bin/claude-agent-acp
#   DUET_CACHE_DIR=/somewhere scripts/install-claude-acp.sh
#
# What npm installs (checked with `npm view` and an install, 0.101.0): the
# adapter (JavaScript, engines.node >= 22), @agentclientprotocol/sdk 2.4.0
# (which also ships ACP's JSON schema, schema/v1/schema.json) and
# @anthropic-ai/claude-agent-sdk 0.3.318, whose platform package
# (@anthropic-ai/claude-agent-sdk-linux-x64, a ~340 MB native executable)
# is Claude Code 2.1.318 itself: the adapter runs that one unless
# CLAUDE_CODE_EXECUTABLE names another `claude` (2.1.330 from
# scripts/install-claude.sh works too). ~400 MB in all.
#
# Its `claude-agent-acp` is `#!/usr/bin/env node` and needs Node >= 22: with
# an older `node` on the PATH this script installs Node 24 with
# scripts/install-node.sh and uses its npm; run the adapter with that node
# (`"$(scripts/install-node.sh)/node" .../claude-agent-acp/dist/index.js`, or
# Node 24 first on the PATH). The older @zed-industries/claude-code-acp
# (newest 0.16.2, from github.com/zed-industries/claude-code-acp) pins
# Claude Agent SDK 0.2.44; this one is from
# github.com/agentclientprotocol/claude-agent-acp.
set -euo pipefail

VERSION=0.101.0
PACKAGE=@agentclientprotocol/claude-agent-acp
NODE_MAJOR_MIN=22

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${DUET_CACHE_DIR:-$repo/.cache}
prefix=$cache/claude-agent-acp-$VERSION
bin=$prefix/node_modules/.bin/claude-agent-acp

log() { printf 'install-claude-acp: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

# shellcheck source=lib/npm-install.sh
. "$repo/scripts/lib/npm-install.sh"

installed_version() { package_version "$1/node_modules/$PACKAGE/package.json"; }

# Whether the install at $1 has the native Claude Code the adapter runs.
has_claude() {
    compgen -G "$1/node_modules/@anthropic-ai/claude-agent-sdk-linux-*/claude" >/dev/null
}

if [[ -x $bin && $(installed_version "$prefix") == "$VERSION" ]] && has_claude "$prefix"; then
    log "$PACKAGE $VERSION already installed in $prefix"
    printf '%s\n' "$bin"
    exit 0
fi

use_node "$NODE_MAJOR_MIN"
make_staging "claude-agent-acp-$VERSION"
npm_install "$PACKAGE@$VERSION"
[[ $(installed_version "$staging") == "$VERSION" ]] || die "npm did not install $PACKAGE@$VERSION"
[[ -x $staging/node_modules/.bin/claude-agent-acp ]] || die "npm installed no claude-agent-acp executable"
has_claude "$staging" || die "npm installed no native Claude Code for $(uname -m) (was --omit=optional set?)"

commit_staging "$prefix"
PATH="$(dirname "$node"):$PATH" "$bin" --version >/dev/null 2>&1 || log "warning: '$bin --version' failed"
log "installed $PACKAGE $VERSION"
printf '%s\n' "$bin"
