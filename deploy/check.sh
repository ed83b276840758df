#!/usr/bin/env bash
# All offline checks of the deployment recipes, in one go (a few minutes on
# first run, which installs the validators into a cached virtualenv):
#   profiles             every shipped profiles file loads in duet and offers
#                        the profiles it should (docker/*.toml,
#                        duet.example.toml, the k8s ConfigMap)
#   compose/check.sh     compose files (strict parser) + Caddyfile, live Caddy
#   k8s/validate.sh      manifests against the Kubernetes JSON schemas
#   k8s/router-test.sh   the session router against two real duets
#   systemd/check.sh     unit (systemd-analyze) + nginx (-t, live TLS proxy)
# The live parts use a duet binary from target/ (or DUET_BIN) and only
# loopback addresses. The container image has its own, slower proof:
# deploy/build-image.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=tools.sh
. "$here/tools.sh"
status=0

duet=${DUET_BIN:-}
if [ -z "$duet" ]; then
  for b in "$repo/target/release/duet" "$repo/target/debug/duet"; do
    [ -x "$b" ] && { duet=$b; break; }
  done
fi
echo "== profiles files"
if [ -z "$duet" ]; then
  echo "no duet binary (cargo build -p duet-server, or DUET_BIN): skipped"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["duet.toml"], end="")' \
    "$here/k8s/duet-config.yaml" >"$work/k8s-configmap.toml"
  token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  for spec in docker/demo.toml:demo docker/qwen.toml:qwen,demo duet.example.toml:demo,qwen k8s-configmap.toml:demo; do
    file=${spec%%:*} want=${spec#*:}
    path=$here/$file
    [ -f "$path" ] || path=$work/$file
    # Made here: the loop below may read it before the background duet has
    # opened it (a failed sed would end the script under set -e).
    : >"$work/out"
    DUET_STATE_DIR=$work/state "$duet" serve --listen 127.0.0.1:0 --token "$token" --config "$path" >"$work/out" 2>"$work/err" &
    pid=$!
    url=""
    for _ in $(seq 1 50); do
      url=$(sed -n 's#^duet is ready: \(http://[^/]*\)/.*#\1#p' "$work/out")
      [ -n "$url" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    got=$( [ -n "$url" ] && curl -fs -H "Authorization: Bearer $token" "$url/api/profiles" \
      | python3 -c 'import json,sys; print(",".join(p["name"] for p in json.load(sys.stdin)))' || true)
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    if [ "$got" = "$want" ]; then
      echo "  ok   $file offers $got"
    else
      echo "  FAIL $file offers '${got}', expected '$want'"; cat "$work/err"; status=1
    fi
  done
fi

for check in compose/check.sh k8s/validate.sh k8s/router-test.sh systemd/check.sh; do
  echo "== deploy/$check"
  if bash "$here/$check"; then echo "== deploy/$check: passed"; else echo "== deploy/$check: FAILED"; status=1; fi
done
exit $status
