#!/usr/bin/env bash
# Checks the systemd + nginx recipe on this machine, without installing it:
#   1. systemd-analyze verify duet.service (ExecStart pointed at a real duet
#      binary in a scratch copy), and the offline security score;
#   2. nginx -t on nginx-duet.conf with a throwaway self-signed certificate
#      and a scratch prefix (Debian's nginx-light; installed if missing);
#   3. if a duet binary is at hand: nginx with that config (ports moved to
#      free loopback ports) in front of a real duet, and through TLS:
#      /healthz, the token login, a session, and a WebSocket upgrade (101).
#
#   deploy/systemd/check.sh
#   DUET_BIN=/path/to/duet deploy/systemd/check.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
duet=${DUET_BIN:-}
if [ -z "$duet" ]; then
  for b in "$repo/target/release/duet" "$repo/target/debug/duet"; do
    [ -x "$b" ] && { duet=$b; break; }
  done
fi

echo "duet.service:"
if command -v systemd-analyze >/dev/null; then
  exe=${duet:-/bin/true}
  sed "s#^ExecStart=/usr/local/bin/duet #ExecStart=$exe #" "$here/duet.service" >"$work/duet.service"
  (cd "$work" && systemd-analyze verify ./duet.service)
  echo "  systemd-analyze verify: ok"
  score=$(cd "$work" && systemd-analyze security --offline=true ./duet.service 2>/dev/null | tail -1 || true)
  echo "  ${score:-systemd-analyze security --offline: not supported by this systemd}"
else
  echo "  systemd-analyze not installed: skipped"
fi

echo "nginx-duet.conf:"
command -v nginx >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=duet.example.com \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
mkdir -p "$work/logs"
site() { # $1 http port, $2 https port, $3 extra sed
  sed -e "s#/etc/letsencrypt/live/duet.example.com/fullchain.pem#$work/cert.pem#" \
      -e "s#/etc/letsencrypt/live/duet.example.com/privkey.pem#$work/key.pem#" \
      ${3:+-e "$3"} \
      -e "s#listen 80;#listen 127.0.0.1:$1;#" -e "s#listen \[::\]:80;##" \
      -e "s#listen 443 ssl http2;#listen 127.0.0.1:$2 ssl http2;#" -e "s#listen \[::\]:443 ssl http2;##" \
      "$here/nginx-duet.conf"
}
conf() { # the site wrapped in a minimal main config under the scratch prefix
  cat <<EOF
pid $work/nginx.pid;
error_log $work/logs/error.log;
events {}
http {
    access_log $work/logs/access.log;
    client_body_temp_path $work/body; proxy_temp_path $work/proxy;
    fastcgi_temp_path $work/fcgi; uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
    include $work/site.conf;
}
EOF
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# As shipped (only the certificate paths changed): syntax and semantics.
sed -e "s#/etc/letsencrypt/live/duet.example.com/fullchain.pem#$work/cert.pem#" \
    -e "s#/etc/letsencrypt/live/duet.example.com/privkey.pem#$work/key.pem#" \
    "$here/nginx-duet.conf" >"$work/site.conf"
conf >"$work/nginx.conf"
nginx -t -p "$work" -c "$work/nginx.conf" 2>&1 | sed 's/^/  /'

[ -n "$duet" ] || { echo "  no duet binary: live proxy test skipped"; exit 0; }
echo "live: nginx (TLS) -> duet"
duet_port=$(free_port) http_port=$(free_port) https_port=$(free_port)
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# The allowed host name as the shipped duet.env.example sets it.
allowed=$(sed -n 's/^DUET_ALLOWED_HOST=//p' "$here/duet.env.example")
DUET_LISTEN=127.0.0.1:$duet_port DUET_TOKEN=$token DUET_BEHIND_TLS_PROXY=true \
  DUET_ALLOWED_HOST=$allowed DUET_STATE_DIR=$work/state "$duet" serve >"$work/duet.log" 2>&1 &
pids+=($!)
site "$http_port" "$https_port" "s#server 127.0.0.1:8080;#server 127.0.0.1:$duet_port;#" >"$work/site.conf"
nginx -p "$work" -c "$work/nginx.conf" -g 'daemon off;' >"$work/nginx.out" 2>&1 &
pids+=($!)
base=https://duet.example.com:$https_port
c=(curl -s --resolve "duet.example.com:$https_port:127.0.0.1" --cacert "$work/cert.pem")
for _ in $(seq 1 50); do "${c[@]}" -f "$base/healthz" >/dev/null 2>&1 && break; sleep 0.2; done
fails=0
check() { if "${@:2}"; then echo "  ok   $1"; else echo "  FAIL $1"; fails=$((fails + 1)); fi; }
check "GET /healthz over TLS" test "$("${c[@]}" "$base/healthz")" = ok
check "http:// redirects to https://" bash -c "curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H 'Host: duet.example.com' http://127.0.0.1:$http_port/x | grep -q '^308 https://duet.example.com/x'"
login=$("${c[@]}" -D - -o /dev/null "$base/?token=$token")
check "token login sets a Secure cookie" grep -qi '^set-cookie: duet_token_.*; Secure' <<<"$login"
id=$("${c[@]}" -H "Authorization: Bearer $token" -X POST "$base/api/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "session created through nginx" test -n "$id"
ws=$("${c[@]}" -i -N --http1.1 --max-time 3 -H "Authorization: Bearer $token" -H "Origin: https://duet.example.com:$https_port" \
  -H 'Connection: Upgrade' -H 'Upgrade: websocket' -H 'Sec-WebSocket-Version: 13' \
  -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' "$base/api/sessions/$id/ws" 2>/dev/null | head -c 300 | tr -d '\r' || true)
check "WebSocket upgrade through nginx (101)" grep -q '^HTTP/1.1 101' <<<"$ws"
check "HSTS header" bash -c "${c[*]} -sI $base/healthz | grep -qi '^strict-transport-security'"
check "a request for another host name is refused (421)" test "$(curl -s -o /dev/null -w '%{http_code}' \
  -H "Authorization: Bearer $token" -H 'Host: evil.example' "http://127.0.0.1:$duet_port/api/sessions")" = 421
if [ "$fails" != 0 ]; then tail -n 20 "$work/logs/error.log" "$work/duet.log"; exit 1; fi
