#!/usr/bin/env bash
# The one command that runs every test duet has, on a fresh Debian machine
# with Rust and Node: it installs what it needs (Chromium and Python from
# apt, the web's npm packages, Qwen Code 0.15.10 (on the system's Node 20)
# and 0.24.4 (on Node 24 from PyPI), Claude Code and its ACP adapter, Gemini
# CLI, Codex and its ACP adapter into .cache/), then runs formatting and lint
# checks, the Rust tests (including real Qwen Code, Claude Code, Gemini CLI
# and Codex through duet, against mock model APIs), the
# web's lint/typecheck/unit tests, the browser end-to-end tests against a
# real duet, and the offline checks of the deployment recipes
# (deploy/check.sh; nginx, dnsmasq and systemd from apt, Caddy and the
# schema validators from PyPI into .cache/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
step() { printf '\n==> %s\n' "$*" >&2; }
# One clean build, not an edit loop: incremental caches would only add
# gigabytes to target/ (Cargo.toml keeps debug info small for the same reason).
export CARGO_INCREMENTAL=0

step "system packages"
missing=()
command -v python3 >/dev/null || missing+=(python3)
[ -x /usr/bin/chromium ] || missing+=(chromium)
# For the deploy checks: venv for their PyPI tools (Debian's python3 has no
# ensurepip without it), the proxies and DNS server they run, systemd-analyze.
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v curl >/dev/null || missing+=(curl)
command -v openssl >/dev/null || missing+=(openssl)
command -v nginx >/dev/null || missing+=(nginx-light)
command -v dnsmasq >/dev/null || missing+=(dnsmasq-base)
command -v systemd-analyze >/dev/null || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test.sh: please install: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

step "web: install, lint, typecheck, unit tests, build"
(
  cd web
  npm ci --no-audit --no-fund --loglevel=error
  npm run lint
  npm run typecheck
  npm test
  npm run build
)

step "Qwen Code for the end-to-end tests: 0.15.10 (Node 20) and 0.24.4 (Node 24)"
# Every agents_e2e scenario runs against both (qwen_0_15::*, qwen_0_24::*).
# The tests run 0.24.4 on .cache/node24's node whatever node the PATH has, so
# Node 24 (scripts/install-node.sh, from PyPI; python3-venv above) is
# installed first; install-qwen.sh then uses it for 0.24.4 if the PATH's node
# is older than 22.
bash scripts/install-qwen.sh
bash scripts/install-node.sh >/dev/null
bash scripts/install-qwen.sh 0.24.4

step "Claude Code for the end-to-end tests"
bash scripts/install-claude.sh
# Its ACP adapter (with the Claude Code it runs), for acp_claude_e2e.
bash scripts/install-claude-acp.sh >/dev/null

step "Gemini CLI and Codex (with codex-acp) for the end-to-end tests"
# gemini_e2e, codex_e2e, acp_gemini_codex_e2e and agent_mocks run them; a
# missing install fails those tests (by design: DUET_SKIP_GEMINI /
# DUET_SKIP_CODEX=1 skip them on purpose).
bash scripts/install-gemini.sh >/dev/null
bash scripts/install-codex.sh >/dev/null

step "rustfmt and clippy"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

step "Rust tests (unit, integration, real Qwen Code end to end)"
cargo nextest run --workspace --locked --no-fail-fast

step "browser end-to-end tests (Playwright + Debian chromium)"
# The duet binary the integration tests just ran (cargo puts it at
# target/debug/duet, web/dist embedded): a separate `cargo build` would
# resolve features without the dev-dependencies and compile most crates again.
[ -x "$TARGET/debug/duet" ] || cargo build --locked -p duet-server --bin duet
(cd web && DUET_BIN="$TARGET/debug/duet" npm run e2e)

step "deploy recipes: compose + Caddy, Kubernetes (manifests, router), systemd + nginx"
# deploy/check.sh against the debug duet just built: every check runs on
# loopback addresses, and its PyPI tools go into .cache/deploy-tools. The
# container image has its own, slower proof, run separately:
# deploy/build-image.sh.
DUET_BIN="$TARGET/debug/duet" bash deploy/check.sh

step "all tests passed"
