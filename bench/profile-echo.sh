#!/usr/bin/env bash
# Profiles duet during duet-bench's keystroke-echo workload: attaches to the
# duet that `duet-bench --echo` starts, for a window while the keys flow.
#
#   bench/profile-echo.sh stat     # perf stat: CPU, context switches, syscalls per key
#   bench/profile-echo.sh record   # perf record with DWARF call graphs -> perf.data
#   bench/profile-echo.sh strace   # strace -f -tt -T: the syscalls of each key, timed
#
#   PEER=ttyd bench/profile-echo.sh stat   # the same, attached to ttyd (or terminado's python)
#
# Needs perf (apt: linux-perf) or strace, and release builds of duet and
# duet-bench. Output in target/bench/profile-echo/. About 30 s per mode.
set -euo pipefail

MODE="${1:-stat}"
WINDOW="${WINDOW:-1.5}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/target/bench/profile-echo${PEER:+-$PEER}"
BENCH="$ROOT/target/release/duet-bench"
mkdir -p "$OUT"

uptime | tee "$OUT/$MODE.load"
PEER="${PEER:-}"
peer_args=()
target=duet
case "$PEER" in
  "") ;;
  ttyd) peer_args=(--peer ttyd); target=ttyd ;;
  terminado) peer_args=(--peer terminado); target=python ;;
  *) echo "PEER: ttyd or terminado" >&2; exit 1 ;;
esac
"$BENCH" --echo "${peer_args[@]}" --json "$OUT/$MODE-results.json" >"$OUT/$MODE-table.md" 2>"$OUT/$MODE-progress.log" &
bench_pid=$!

# duet starts once the bare-PTY baseline is done (a few seconds), a peer
# once duet is done.
duet_pid=""
for _ in $(seq 1200); do
  duet_pid="$(pgrep -P "$bench_pid" -x "$target" || true)"
  [[ -n "$duet_pid" ]] && break
  sleep 0.1
done
[[ -n "$duet_pid" ]] || { echo "$target did not start" >&2; exit 1; }
# Skip the session start and the warm-up keys.
sleep 0.5

case "$MODE" in
  stat)
    perf stat ${PER_THREAD:+--per-thread} -p "$duet_pid" -o "$OUT/stat.txt" \
      -e task-clock,context-switches,cpu-migrations \
      -e syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_sendto \
      -e syscalls:sys_enter_recvfrom,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_futex \
      -e syscalls:sys_enter_writev,syscalls:sys_enter_readv \
      -- sleep "$WINDOW"
    cat "$OUT/stat.txt"
    ;;
  record)
    perf record -F 9999 -g --call-graph dwarf,16384 -p "$duet_pid" -o "$OUT/perf.data" \
      -- sleep "$WINDOW"
    perf report -i "$OUT/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null \
      | head -120 >"$OUT/report.txt"
    echo "perf report -i $OUT/perf.data (summary in $OUT/report.txt)"
    ;;
  strace)
    timeout "$WINDOW" strace -f -tt -T -p "$duet_pid" -o "$OUT/strace.txt" || true
    echo "$(wc -l <"$OUT/strace.txt") lines in $OUT/strace.txt"
    ;;
  *)
    echo "usage: $0 stat|record|strace" >&2
    exit 1
    ;;
esac
wait "$bench_pid" || true
grep 'keystroke echo' "$OUT/$MODE-table.md" | head -4 | cut -d'|' -f2-7
