# duet's container image: the `duet` gateway with its web UI embedded, running
# as a non-root user under tini, ready to sit behind a TLS-terminating proxy.
#
#   docker build -t duet .                              # demo agent only
#   docker build -t duet:qwen --build-arg WITH_QWEN=1 .  # + Node 20 and Qwen Code
#   docker run --rm -p 127.0.0.1:8080:8080 duet          # token is printed in the log
#
# Deployment recipes (compose + Caddy, Kubernetes, systemd + nginx) are in
# deploy/README.md. deploy/build-image.sh builds and smoke-tests this file with
# buildah where no Docker engine runs.
#
# Stages: web (Vite build of web/) -> planner (cargo skeleton) -> rust (deps
# layer, then the real build) -> qwen (optional Node + Qwen Code) -> runtime.

# Build with the Qwen Code profile (1) or without it (0). Declared before the
# first FROM so that every stage below can re-declare and read it.
ARG WITH_QWEN=0
# Base images, overridable for a registry mirror or for build machines whose
# builders need extra trust (e.g. a TLS-intercepting proxy's CA: see
# deploy/build-image.sh). The runtime base is what ships; keep it pristine.
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim
ARG RUST_IMAGE=docker.io/library/rust:1-bookworm
ARG RUNTIME_IMAGE=docker.io/library/debian:bookworm-slim

# --------------------------------------------------------------------- web UI
FROM ${NODE_IMAGE} AS web
WORKDIR /src/web
# Lockfile first: `npm ci` stays cached until the dependencies change.
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# ------------------------------------------------------- cargo skeleton plan
# From `cargo metadata` (deploy/docker/cargo-skeleton.pl), so that new
# workspace members such as bench/ need no change here:
#   /skeleton  the workspace manifests, the lockfile and a stub source per
#              target: what the dependency layer below is built from;
#   /rust-src  the skeleton plus the real directories of duet-server and the
#              workspace crates it depends on: what the real build uses.
# This stage reruns on any change to the build context, but its outputs only
# change with duet's own Rust sources, and the COPY --from steps below are
# cached by content: editing docs, deploy/, web/ or bench/ does not rebuild
# the Rust layers.
FROM ${RUST_IMAGE} AS planner
WORKDIR /src
COPY . .
RUN cargo metadata --no-deps --format-version 1 --offline >/tmp/metadata.json \
 && perl deploy/docker/cargo-skeleton.pl /tmp/metadata.json /skeleton /rust-src duet-server

# ------------------------------------------------------------------ rust build
FROM ${RUST_IMAGE} AS rust
WORKDIR /src
# Dependencies only, from the skeleton: this slow layer is reused until
# Cargo.toml/Cargo.lock change. crates.io is fetched here.
COPY --from=planner /skeleton/ ./
RUN cargo build --release --locked -p duet-server
# The real sources, and the web UI that build.rs embeds. Their mtimes come from
# the build context and may be older than the stub artifacts: touch them, or
# cargo would keep the stubs. The release profile keeps line tables (readable
# backtraces); objcopy compresses them, which std's symbolizer still reads.
COPY --from=planner /rust-src/ ./
COPY --from=web /src/web/dist/ web/dist/
RUN find . -path ./target -prune -o \( -name '*.rs' -o -name Cargo.toml \) -exec touch {} + \
 && cargo build --release --locked -p duet-server \
 && mkdir -p /out \
 && objcopy --compress-debug-sections=zlib target/release/duet /out/duet \
 && /out/duet --version

# ---------------------------------------------------------- optional Qwen Code
# Always built (it is tiny without Qwen) so that the runtime stage can COPY from
# it unconditionally: with WITH_QWEN=0 /opt/qwen is an empty directory.
FROM ${NODE_IMAGE} AS qwen
ARG WITH_QWEN
# Pinned: 0.15.10 is the release duet's sidecar protocol was checked against
# (docs/qwen-code.md) and the last one that runs on Node 20.
ARG QWEN_CODE_VERSION=0.15.10
# Only the node binary is kept for run time: npm stays out of the image.
RUN mkdir -p /opt/qwen/bin \
 && if [ "$WITH_QWEN" = 1 ]; then \
      npm install --prefix /opt/qwen/lib --no-audit --no-fund --omit=dev \
        "@qwen-code/qwen-code@${QWEN_CODE_VERSION}" \
      && npm cache clean --force \
      && cp "$(command -v node)" /opt/qwen/bin/node \
      && ln -s ../lib/node_modules/.bin/qwen /opt/qwen/bin/qwen \
      && /opt/qwen/bin/node --version; \
    fi

# ---------------------------------------------------------------------- runtime
FROM ${RUNTIME_IMAGE} AS runtime
ARG WITH_QWEN
# tini: PID 1 that forwards SIGTERM to duet and reaps orphans that the hosted
#   programs leave behind (duet reaps its own children, not grandchildren).
# ca-certificates: agents call HTTPS model endpoints.
# setsid(1), which duet starts every program through, is in util-linux,
#   Essential in Debian, so it is in every Debian image already.
# Terminfo: duet runs programs with TERM=xterm-256color, which ncurses-base
#   (always in Debian) covers; ncurses-term (4 MB of exotic entries) is left out.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
# A fixed uid/gid so that volumes, Kubernetes securityContext and host
# bind-mounts can refer to it. HOME is on the state volume: agents write there.
# --no-log-init: no lastlog/faillog entries, which would be written as large
# files into the layer for a high uid.
RUN groupadd --gid 10001 duet \
 && useradd --uid 10001 --gid duet --no-log-init --no-create-home --home-dir /var/lib/duet --shell /usr/sbin/nologin duet \
 && install -d -o duet -g duet -m 0700 /var/lib/duet /var/lib/duet/sessions
COPY --from=qwen /opt/qwen/ /opt/qwen/
# qwen-settings.json: Qwen Code's system settings (QWEN_CODE_SYSTEM_SETTINGS_PATH
# in qwen.toml), root-owned so that no session can change them.
COPY deploy/docker/demo.toml deploy/docker/qwen.toml deploy/docker/qwen-settings.json /etc/duet/
COPY deploy/docker/healthcheck /usr/local/bin/duet-healthcheck
# /etc/duet/duet.toml is the active profile set: Qwen Code by default in the
# Qwen build, the demo agent otherwise. Either file can be picked at run time
# with DUET_CONFIG.
RUN if [ "$WITH_QWEN" = 1 ]; then ln -s qwen.toml /etc/duet/duet.toml; else ln -s demo.toml /etc/duet/duet.toml; fi \
 && chmod 0755 /usr/local/bin/duet-healthcheck
COPY --from=rust /out/duet /usr/local/bin/duet

# Off loopback duet insists on an explicit statement that TLS is terminated in
# front of it; auth stays on: the token comes from DUET_TOKEN_FILE (a secret)
# or DUET_TOKEN, else duet generates one and prints the start URL in the log.
ENV DUET_LISTEN=0.0.0.0:8080 \
    DUET_BEHIND_TLS_PROXY=true \
    DUET_STATE_DIR=/var/lib/duet/sessions \
    DUET_CONFIG=/etc/duet/duet.toml \
    HOME=/var/lib/duet \
    PATH=/opt/qwen/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Session directories (events/input files, transcripts, agents' work dirs).
VOLUME ["/var/lib/duet"]
WORKDIR /var/lib/duet
USER 10001:10001
EXPOSE 8080
# duet's graceful shutdown on SIGTERM takes at most ~5 s (programs get SIGTERM,
# then SIGHUP, then SIGKILL after 3 s); give the runtime's stop timeout more.
STOPSIGNAL SIGTERM
# No curl in the image: the probe is a bash /dev/tcp request (see the script).
# Docker-format images only; Kubernetes uses its own probes (deploy/k8s).
HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/duet-healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/duet"]
CMD ["serve"]
