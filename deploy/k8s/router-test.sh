#!/usr/bin/env bash
# Runs deploy/k8s/router.Caddyfile against two real duet processes, with a
# local DNS server standing in for the cluster DNS, to prove the session
# routing design without a cluster:
#
#   dnsmasq      on 127.53.X.Y:53 (random X.Y, so that concurrent runs on one
#                machine do not collide), the "cluster DNS":
#                SRV _http._tcp.duet-pods.duet.svc.cluster.local -> duet-0, duet-1
#                A   duet-0.duet-pods... -> 127.0.0.2, duet-1... -> 127.0.0.3
#   duet-0/1     `duet serve` on 127.0.0.2 and 127.0.0.3 (same port, same token)
#   router       Caddy 2.11 with router.Caddyfile, in a private mount namespace
#                whose /etc/resolv.conf names that DNS server and the pod's
#                search path, as in a pod. The only edits to the Caddyfile are
#                the ports (free ones) and binding to 127.0.0.1.
#
# Checks: the landing redirects to a ready pod and keeps ?token=; a browser
# following the ?token= login through the router lands on /s/duet-N/ with the
# login cookie, which then authenticates API calls there; a session created
# through /s/duet-0/ is reachable there and not through /s/duet-1/; the
# WebSocket upgrades through the router; a stopped pod is skipped by the landing and
# fails fast under its own prefix; names that are not duet pods are refused.
#
#   deploy/k8s/router-test.sh                    # duet from target/{release,debug}
#   DUET_BIN=/path/to/duet deploy/k8s/router-test.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../tools.sh
. "$here/../tools.sh"
command -v dnsmasq >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dnsmasq-base >/dev/null; }
duet=${DUET_BIN:-}
if [ -z "$duet" ]; then
  for b in "$repo/target/release/duet" "$repo/target/debug/duet"; do
    [ -x "$b" ] && { duet=$b; break; }
  done
fi
[ -x "${duet:-}" ] || { echo "no duet binary: cargo build -p duet-server, or set DUET_BIN" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    for f in "$work"/*.log; do echo "--- $(basename "$f")"; tail -20 "$f"; done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
pod_port=$(free_port) router_port=$(free_port) health_port=$(free_port)
domain=duet-pods.duet.svc.cluster.local
# resolv.conf cannot name a port, so the stand-in DNS server gets its own
# loopback address instead.
dns_ip=127.53.$((RANDOM % 254 + 1)).$((RANDOM % 254 + 1))
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
fails=0 passes=0
check() { # description, then a command that must succeed
  local what=$1; shift
  if "$@"; then passes=$((passes + 1)); echo "  ok   $what"; else fails=$((fails + 1)); echo "  FAIL $what"; fi
}

dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
  --listen-address=$dns_ip --port=53 --user=root --log-facility=- \
  --srv-host="_http._tcp.$domain,duet-0.$domain,$pod_port" \
  --srv-host="_http._tcp.$domain,duet-1.$domain,$pod_port" \
  --host-record="duet-0.$domain,127.0.0.2" --host-record="duet-1.$domain,127.0.0.3" \
  >"$work/dnsmasq.log" 2>&1 &
pids+=($!)

# The public name duet answers to, as duet.yaml sets it (the Ingress host).
public_host=$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "StatefulSet":
        env = {e["name"]: e.get("value") for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
        print(env["DUET_ALLOWED_HOST"])' "$here/duet.yaml")
for i in 0 1; do
  DUET_LISTEN=127.0.0.$((i + 2)):$pod_port DUET_TOKEN=$token DUET_STATE_DIR=$work/state-$i \
    DUET_ALLOWED_HOST=$public_host "$duet" serve >"$work/duet-$i.log" 2>&1 &
  pids+=($!)
  eval "duet_pid_$i=$!"
done

sed -e "s/^:8080 {/:$router_port {\n\tbind 127.0.0.1/" -e "s/^:8081 {/:$health_port {\n\tbind 127.0.0.1/" \
  -e "s/\(dynamic a .*\) 8080 {/\1 $pod_port {/" \
  "$here/router.Caddyfile" >"$work/Caddyfile"
printf 'nameserver %s\nsearch duet.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n' "$dns_ip" >"$work/resolv.conf"
HOME=$work XDG_DATA_HOME=$work XDG_CONFIG_HOME=$work DUET_PODS_DOMAIN=$domain \
  unshare --mount sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$work/resolv.conf" \
  caddy run --config "$work/Caddyfile" --adapter caddyfile >"$work/caddy.log" 2>&1 &
pids+=($!)

for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$health_port/healthz" >/dev/null 2>&1 \
    && curl -fs "http://127.0.0.2:$pod_port/healthz" >/dev/null 2>&1 \
    && curl -fs "http://127.0.0.3:$pod_port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
base=http://127.0.0.1:$router_port
auth=(-H "Authorization: Bearer $token")
location() { curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$@"; }

echo "router health and landing:"
check "router /healthz on its own port" test "$(curl -s "http://127.0.0.1:$health_port/healthz")" = ok
echo "  (GET / answered: $(location "$base/"))"
seen=""
for _ in $(seq 1 30); do seen+=" $(location "$base/" | sed -n 's#^302 .*/s/\(duet-[0-9]*\)/$#\1#p')"; done
check "GET / redirects (302) to /s/duet-N/, 30 times" test "$(echo "$seen" | wc -w)" = 30
check "the landing spreads over both pods" bash -c "grep -q duet-0 <<<'$seen' && grep -q duet-1 <<<'$seen'"
check "the landing keeps ?token=" bash -c "[[ '$(location "$base/?token=$token")' =~ ^302\ .*/s/duet-[01]/\?token=$token$ ]]"

echo "per-pod routes:"
check "/s/duet-0 -> 308 /s/duet-0/" bash -c "[[ '$(location "$base/s/duet-0?x=1")' =~ ^308\ .*/s/duet-0/\?x=1$ ]]"
check "/s/duet-0/healthz reaches duet" test "$(curl -s "$base/s/duet-0/healthz")" = ok
# The start URL's login, as a browser does it: follow duet's redirect through
# the router (curl resolves a relative Location against the request URL, as
# browsers do) with a cookie jar, and use the cookie under the prefix. What
# matters is where the browser lands and that it is logged in there, not how
# duet spells its Location header.
jar=$work/cookies
start="$base/s/duet-1/?token=$token"
landed=$(curl -s -L --max-redirs 3 -c "$jar" -b "$jar" -D "$work/login-headers" -o "$work/login-page" \
  -w '%{http_code} %{num_redirects} %{url_effective}' "$start" || true)
login=$(tr -d '\r' <"$work/login-headers")
echo "  (login: $(grep -i '^HTTP/\|^location:' <<<"$login" | tr '\n' ' '))"
check "login redirects (one 3xx) to exactly /s/duet-1/, no token in it" test "$landed" = "200 1 $base/s/duet-1/"
login_cookie() { grep -i '^set-cookie: duet_token_' <<<"$login" | grep -i 'httponly' | grep -qi 'path=/;'; }
check "  ... sets the token cookie (HttpOnly, Path=/)" login_cookie
check "  ... and the page there is the web UI (or its placeholder)" grep -qi '<html\|<!doctype' "$work/login-page"
code_with_cookie() { curl -s -o /dev/null -w '%{http_code}' -b "$jar" "$@"; }
check "  ... where the cookie alone authenticates the API (200)" test "$(code_with_cookie "$base/s/duet-1/api/sessions")" = 200
check "  ... also a same-origin POST, as the UI sends it (201)" test "$(code_with_cookie -X POST -H "Origin: $base" \
  -H 'content-type: application/json' -d '{"cols":80,"rows":24}' "$base/s/duet-1/api/sessions")" = 201
check "  ... and under the other pod's prefix (one token, cookie path /)" test "$(code_with_cookie "$base/s/duet-0/api/sessions")" = 200
check "web UI (or its placeholder page) under the prefix" bash -c "curl -fs '$base/s/duet-0/' | grep -qi '<html\|<!doctype'"
# With the UI embedded, its assets (referenced relative to the page) load
# under the prefix too.
asset=$(curl -fs "$base/s/duet-0/" | grep -o '\./assets/[^"]*' | head -1 || true)
if [ -n "$asset" ]; then
  check "UI asset ${asset#./} under the prefix (200)" test "$(curl -s -o /dev/null -w '%{http_code}' "$base/s/duet-0/${asset#./}")" = 200
else
  echo "  --   this duet has no UI built in: asset check skipped"
fi
check "API without a token is refused (401)" test "$(curl -s -o /dev/null -w '%{http_code}' "$base/s/duet-0/api/sessions")" = 401
created=$(curl -fs "${auth[@]}" -X POST -H 'content-type: application/json' -d '{"cols":80,"rows":24}' "$base/s/duet-0/api/sessions")
id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$created")
check "session created through /s/duet-0/" test -n "$id"
check "  ... is there under /s/duet-0/" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/s/duet-0/api/sessions/$id")" = 200
check "  ... and not under /s/duet-1/ (404)" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/s/duet-1/api/sessions/$id")" = 404
# The upgrade request, sent raw: the answer's head is returned as soon as it
# is complete (curl would keep the upgraded connection open until a timeout).
ws_head() { # path
  python3 - "$router_port" "$1" "$base" "$token" <<'EOF'
import socket, sys
port, path, origin, token = sys.argv[1:]
s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
s.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
           f"Authorization: Bearer {token}\r\nOrigin: {origin}\r\n"
           "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n").encode())
head = b""
while b"\r\n\r\n" not in head:
    chunk = s.recv(4096)
    if not chunk:
        break
    head += chunk
s.close()
print(head.split(b"\r\n\r\n")[0].decode("latin-1").replace("\r", ""))
EOF
}
ws=$(ws_head "/s/duet-0/api/sessions/$id/ws" || true)
check "WebSocket upgrade through the router (101)" grep -q '^HTTP/1.1 101' <<<"$ws"
check "  ... with the server's accept key" grep -qi '^sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=' <<<"$ws"
check "the public host name ($public_host) passes through to duet" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -H "Host: $public_host" "$base/s/duet-0/api/sessions/$id")" = 200
check "another host name is refused by duet (421)" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -H 'Host: evil.example' "$base/s/duet-0/api/sessions")" = 421
check "a cross-site Origin is refused (403)" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -H 'Origin: https://evil.example' "$base/s/duet-0/api/sessions")" = 403

echo "refusals:"
check "/s/<not a duet pod>/ is not proxied (404)" test "$(curl -s -o /dev/null -w '%{http_code}' "$base/s/evil.example.com/healthz")" = 404
check "/s/duet-7/ (no such pod) fails fast (502/503)" bash -c "[[ '$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$base/s/duet-7/healthz")' =~ ^50[23]$ ]]"
check "/api/... without a pod prefix (404)" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/api/sessions")" = 404

echo "a pod goes away:"
kill -TERM "$duet_pid_1"
wait "$duet_pid_1" 2>/dev/null || true
seen=""
# The stand-in DNS still lists duet-1 (as a cluster's does for a few seconds),
# so about half of these landings try it first and retry after Caddy's
# lb_try_interval (250 ms). 10 landings: a router without the retry passes
# with probability 2^-10.
for _ in $(seq 1 10); do seen+=" $(location "$base/" | sed -n 's#^302 .*/s/\(duet-[0-9]*\)/$#\1#p')"; done
check "the landing skips the stopped pod (10 of 10 to duet-0)" test "$(grep -o duet-0 <<<"$seen" | wc -l)" = 10
check "its prefix answers 502" test "$(curl -s -o /dev/null -w '%{http_code}' "$base/s/duet-1/healthz")" = 502
check "duet-0's session is untouched" test "$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" "$base/s/duet-0/api/sessions/$id")" = 200

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
