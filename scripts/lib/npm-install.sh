# shellcheck shell=bash
# Shared by the scripts/install-*.sh that install an agent from npm: pick a
# Node new enough for it, and install into a staging folder that is renamed
# into place only once it is complete. Sourced, not run; the caller defines
# `repo`, `cache`, `log` and `die` first.

# Picks a Node whose major version is at least $1: the PATH's `node`, or else
# Node 24 from scripts/install-node.sh (the machines have Node 20 from apt).
# Sets `node` (its path) and `npm` (an array that runs the matching npm), and
# puts that node first on the PATH, for the scripts npm runs with `node`.
use_node() {
    local need=$1 major=0 dir
    node=$(command -v node || true)
    [[ -n $node ]] && major=$("$node" -p 'process.versions.node.split(".")[0]')
    if ((major >= need)); then
        command -v npm >/dev/null || die "npm is not on the PATH"
        npm=(npm)
        return 0
    fi
    log "this needs Node >= $need (PATH has ${node:-no node}${node:+ v$major}); using Node 24 from scripts/install-node.sh"
    dir=$("$repo/scripts/install-node.sh")
    node=$dir/node
    # The wheel's bin/npm is a stub that does not run; its npm proper is here.
    npm=("$node" "$dir/../lib/node_modules/npm/bin/npm-cli.js")
    export PATH="$dir:$PATH"
}

# Makes a new folder in the cache for an install named $1 and sets `staging`
# to it; removed on exit unless `commit_staging` moved it into place.
make_staging() {
    mkdir -p "$cache"
    staging=$(mktemp -d "$cache/.$1.XXXXXX")
    # shellcheck disable=SC2064 # expand now: the trap must remove this folder
    trap "rm -rf '$staging'" EXIT
}

# Runs `npm install` of the package specs $@ into the staging folder: exact
# versions only (the specs pin them), no dev dependencies, no audit, fund or
# update-notifier requests. A package.json already there (its `overrides`)
# is honoured.
npm_install() {
    log "installing $* into $staging"
    "${npm[@]}" install --prefix "$staging" --no-audit --no-fund --no-update-notifier \
        --save-exact --omit=dev "$@" >&2
}

# Replaces $1 with the staging folder, so an interrupted install never looks
# like a finished one.
commit_staging() {
    rm -rf "$1"
    mv "$staging" "$1"
    trap - EXIT
}

# The "version" of the package.json at $1, or nothing (read without node, so
# it works before a node is chosen).
package_version() {
    [[ -f $1 ]] || return 0
    sed -n 's/^  "version": "\(.*\)",$/\1/p' "$1" | head -n 1
}
