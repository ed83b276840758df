#!/usr/bin/env bash
# Builds ttyd from source into .cache/ttyd/ for `duet-bench --peer ttyd`.
# Debian does not package ttyd (bookworm: `apt-cache policy ttyd` has no
# candidate), so we build a pinned commit against Debian's libwebsockets
# (which is built with libuv, as ttyd requires).
#
# Idempotent: does nothing when .cache/ttyd/bin/ttyd exists at the pinned
# commit. Prints the binary's path on its last line.
#
# The source comes from $TTYD_SRC (a ttyd checkout or git directory, e.g. a
# mirror on a machine without GitHub), else a clone of
# https://github.com/tsl0922/ttyd.
set -euo pipefail

# ttyd 1.7.7 plus later fixes (master of 2026-03-20).
COMMIT=647d55ad865f5ad85ad89ba5e1b28d9b6ac8fd55
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="$ROOT/.cache/ttyd"
BIN="$CACHE/bin/ttyd"

if [[ -x "$BIN" && "$(cat "$CACHE/commit" 2>/dev/null)" == "$COMMIT" ]]; then
  echo "$BIN"
  exit 0
fi

need=()
for pkg in cmake libwebsockets-dev libjson-c-dev libuv1-dev zlib1g-dev build-essential git; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "build-ttyd: installing ${need[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq "${need[@]}" >&2
fi

src="$CACHE/src"
rm -rf "$src" "$CACHE/build"
mkdir -p "$src"
repo="${TTYD_SRC:-}"
if [[ -z "$repo" ]]; then
  repo="$CACHE/clone"
  [[ -d "$repo" ]] || git clone --quiet https://github.com/tsl0922/ttyd "$repo" >&2
fi
# Works for a bare git directory and for a checkout alike.
git --git-dir="$(git -C "$repo" rev-parse --absolute-git-dir 2>/dev/null || echo "$repo")" \
  archive "$COMMIT" | tar -x -C "$src"

cmake -S "$src" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release >&2
cmake --build "$CACHE/build" -j "$(nproc)" >&2
mkdir -p "$CACHE/bin"
cp "$CACHE/build/ttyd" "$BIN"
echo "$COMMIT" >"$CACHE/commit"
"$BIN" --version >&2
echo "$BIN"
