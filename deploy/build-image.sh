#!/usr/bin/env bash
# Proof that the Dockerfile builds and the image works, on a machine with no
# Docker engine and no container registry (buildah, chroot isolation). Not part
# of the default test command: it compiles duet in release mode inside the
# build. Measured on 2 busy cores: base stand-ins ~5 min once per machine, a
# cold build 6-8 min (dependency layer ~4 min, duet ~2 min), a rebuild after
# a change to duet's sources ~2.5 min, with nothing changed ~15 s.
#
#   deploy/build-image.sh              # default image (demo agent)
#   WITH_QWEN=1 deploy/build-image.sh  # + Node 20 and Qwen Code 0.15.10
#
# Steps:
#   1. ../shared/tools/container-images.sh makes local stand-ins for the base
#      images (node:20-bookworm-slim, rust:1-bookworm, debian:bookworm-slim).
#   2. Builder images: if this machine trusts extra CAs (a TLS-intercepting
#      egress proxy), derived node/rust builder images that trust them too, so
#      npm and cargo can fetch inside the build. The runtime base is left alone:
#      no build-machine CA ends up in the image.
#   3. buildah bud --isolation chroot --layers --format docker (docker format
#      keeps HEALTHCHECK; OCI has no such field).
#   4. Inside the image: `duet --help`, the user, tini, the health probe, and a
#      smoke start: duet with a token on 127.0.0.1, GET /healthz, POST
#      /api/sessions (demo agent), DELETE it, SIGTERM, clean exit.
#   5. The compose file through two parsers (deploy/compose/check.sh).
#   6. Sizes: the image, its base, and what this Dockerfile adds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
tag=${DUET_IMAGE_TAG:-localhost/duet:dev}
with_qwen=${WITH_QWEN:-0}
[ "$with_qwen" = 1 ] && tag=${DUET_IMAGE_TAG:-localhost/duet:qwen}
t0=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - t0))"; }

step "base images"
command -v buildah >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah >/dev/null; }
node_image=docker.io/library/node:20-bookworm-slim
rust_image=docker.io/library/rust:1-bookworm
runtime_image=docker.io/library/debian:bookworm-slim
# Read the whole list before matching: `buildah images | grep -q` under
# pipefail can report "missing" when grep exits first (buildah gets SIGPIPE).
have_image() { buildah images --format '{{.Name}}:{{.Tag}}' | grep -x "$1" >/dev/null; }
# container-images.sh is only called when a stand-in is missing: its own
# check has that SIGPIPE problem once many images exist, and a needless
# rebuild of a base image would invalidate every cached layer.
if have_image "$node_image" && have_image "$rust_image" && have_image "$runtime_image"; then
  buildah images --format '{{.Name}}:{{.Tag}} {{.Size}}' | grep -E 'debian:bookworm-slim|rust:1-bookworm|node:20-bookworm-slim'
else
  bash "$repo/../shared/tools/container-images.sh"
fi

step "builder images"
shopt -s nullglob
extra_cas=(/usr/local/share/ca-certificates/*.crt)
if [ ${#extra_cas[@]} -gt 0 ]; then
  # Rebuilt when the base or the CA set changes (the tag names both).
  sum=$( (buildah images --format '{{.ID}}' "$node_image"; buildah images --format '{{.ID}}' "$rust_image"; cat "${extra_cas[@]}") | sha256sum | cut -c1-12)
  derive() { # $1 base image, $2 derived tag
    if have_image "$2"; then return; fi
    local c
    c=$(buildah from "$1")
    buildah run --isolation chroot "$c" -- mkdir -p /usr/local/share/ca-certificates
    buildah copy "$c" "${extra_cas[@]}" /usr/local/share/ca-certificates/ >/dev/null
    buildah run --isolation chroot "$c" -- update-ca-certificates >/dev/null
    # Node ignores the system store unless told; cargo (libcurl) reads it.
    buildah config --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
      --env CARGO_HTTP_CAINFO=/etc/ssl/certs/ca-certificates.crt "$c"
    buildah commit "$c" "$2" >/dev/null
    buildah rm "$c" >/dev/null
    echo "made $2 (trusts ${#extra_cas[@]} extra CA file(s))"
  }
  derive "$node_image" "localhost/duet-builder/node:$sum"
  derive "$rust_image" "localhost/duet-builder/rust:$sum"
  node_image=localhost/duet-builder/node:$sum
  rust_image=localhost/duet-builder/rust:$sum
else
  echo "no extra CAs: building on the base images as they are"
fi

step "build $tag (WITH_QWEN=$with_qwen)"
b0=$(date +%s)
buildah bud --isolation chroot --layers --format docker \
  --build-arg WITH_QWEN="$with_qwen" \
  --build-arg NODE_IMAGE="$node_image" \
  --build-arg RUST_IMAGE="$rust_image" \
  --build-arg RUNTIME_IMAGE="$runtime_image" \
  -t "$tag" "$repo"
build_secs=$(($(date +%s) - b0))

step "image checks"
ctr=$(buildah from "$tag")
runner=""
descendants() { local p; for p in $(pgrep -P "$1"); do echo "$p"; descendants "$p"; done; }
find_tini() { # tini among the descendants of the `buildah run` below
  local p
  [ -n "$runner" ] || return 0
  for p in $(descendants "$runner"); do
    if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = tini ]; then echo "$p"; return 0; fi
  done
  return 0
}
cleanup() {
  # A failed check must not leave the smoke-test duet running.
  local t
  t=$(find_tini)
  [ -n "$t" ] && kill -TERM "$t" 2>/dev/null && sleep 1
  buildah rm "$ctr" >/dev/null 2>&1 || true
}
trap cleanup EXIT
run() { buildah run --isolation chroot "$ctr" -- "$@"; }
buildah inspect --type image "$tag" | python3 -c '
import json, sys
c = json.load(sys.stdin)["Docker"]["config"]
for k in ("User", "Entrypoint", "Cmd", "WorkingDir", "StopSignal", "ExposedPorts", "Volumes", "Healthcheck"):
    print(f"  {k}: {json.dumps(c.get(k))}")
print("  Env: " + " ".join(e for e in c["Env"] if e.startswith(("DUET_", "HOME="))))
' 
run duet --help
run duet --version
run sh -c 'id; /usr/bin/tini --version; ls -l /etc/duet/; echo "xterm-256color colors: $(TERM=xterm-256color tput colors)"'
if [ "$with_qwen" = 1 ]; then
  run sh -c 'echo "node $(node --version), qwen $(qwen --version)"; readlink /etc/duet/duet.toml'
fi

step "smoke start"
# `buildah run` executes the image's command environment with the same uid
# (10001), env and paths as a container would; duet listens on 127.0.0.1 of
# the host's network namespace (chroot isolation has no network namespace of
# its own), so pick a free port. Nor has it a PID namespace: tini is not PID 1
# here, so TINI_SUBREAPER makes it the reaper it is in a real container.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
log=$(mktemp)
buildah run --isolation chroot --user 10001:10001 \
  --env DUET_LISTEN=127.0.0.1:$port --env DUET_TOKEN="$token" --env DUET_STATE_DIR=/tmp/duet-smoke \
  --env TINI_SUBREAPER=1 \
  --env OPENAI_API_KEY=sk-smoke --env OPENAI_BASE_URL=http://127.0.0.1:9/v1 --env OPENAI_MODEL=smoke-model \
  "$ctr" -- /usr/bin/tini -- /usr/local/bin/duet serve >"$log" 2>&1 &
runner=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
echo "healthz: $(curl -fsS "http://127.0.0.1:$port/healthz")"
run env DUET_LISTEN=127.0.0.1:$port /usr/local/bin/duet-healthcheck && echo "HEALTHCHECK probe: ok"
echo "unauthenticated /api/sessions: HTTP $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/sessions")"
auth=(-H "Authorization: Bearer $token")
curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/profiles"; echo
created=$(curl -fsS "${auth[@]}" -X POST -H 'content-type: application/json' -d '{"profile":"demo","cols":100,"rows":30}' "http://127.0.0.1:$port/api/sessions")
echo "created: $created"
id=$(printf '%s' "$created" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
sleep 2
echo "screen (first lines):"
curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/sessions/$id/screen" | sed -n '1,6p'
echo "events: $(curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/sessions/$id/events" | wc -l) line(s)"
echo "delete: $(curl -fsS "${auth[@]}" -X DELETE "http://127.0.0.1:$port/api/sessions/$id")"
if [ "$with_qwen" = 1 ]; then
  # Qwen Code starts with the image's qwen profile and shows its TUI; the
  # endpoint is a closed local port (no model is called): enough to see it
  # run under duet in this image.
  qid=$(curl -fsS "${auth[@]}" -X POST -H 'content-type: application/json' -d '{"profile":"qwen","cols":120,"rows":40}' \
    "http://127.0.0.1:$port/api/sessions" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  for _ in $(seq 1 60); do
    [ "$(curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/sessions/$qid/events" | wc -l)" -gt 0 ] && break
    sleep 0.5
  done
  echo "qwen session: $(curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/sessions/$qid" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["status"], "events:", d["last_seq"])')"
  curl -fsS "${auth[@]}" "http://127.0.0.1:$port/api/sessions/$qid/screen" | grep -v '^\s*$' | head -8
fi
# A second session left running, to see SIGTERM end it.
curl -fsS "${auth[@]}" -X POST "http://127.0.0.1:$port/api/sessions" >/dev/null
# SIGTERM to tini (what `docker stop` does); it forwards it to duet.
tini_pid=$(find_tini)
[ -n "$tini_pid" ] || { echo "tini not found under pid $runner" >&2; exit 1; }
s0=$(date +%s%N)
kill -TERM "$tini_pid"
wait "$runner" && rc=0 || rc=$?
echo "stopped with exit code $rc after $((($(date +%s%N) - s0) / 1000000)) ms"
echo "--- duet log:"; cat "$log"; rm -f "$log"
[ "$rc" = 0 ] || { echo "duet did not exit cleanly" >&2; exit 1; }

step "compose file"
bash "$here/compose/check.sh"

step "sizes"
# podman shares buildah's image store; container-images.sh installed it.
podman history --format '{{.Size}}\t{{.CreatedBy}}' "$tag" | cut -c1-150 | head -12
image_bytes=$(podman image inspect --format '{{.Size}}' "$tag")
base_bytes=$(podman image inspect --format '{{.Size}}' "$runtime_image")
human() { numfmt --to=iec-i --suffix=B "$1"; }
echo "image $tag: $(human "$image_bytes") = runtime base $(human "$base_bytes") + $(human $((image_bytes - base_bytes))) added by the Dockerfile"
echo "(the base here is a debootstrap stand-in for debian:bookworm-slim, which is ~75 MiB on Docker Hub)"
echo "build: ${build_secs}s; total: $(($(date +%s) - t0))s"
