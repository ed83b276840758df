#!/usr/bin/env python3
"""Soak test: a real `duet serve` under steady churn for a given time, with
its file descriptors, memory and threads sampled, to show they stay flat.

    python3 bench/soak.py                    # 30 minutes: the run to quote
    python3 bench/soak.py --duration 5m      # a shorter look

It starts duet (target/release/duet, else target/debug/duet, or --duet) on
127.0.0.1 with a private state dir, then for the whole run keeps:

- --sessions (50) sessions, each sent a prompt every --prompt-every
  (15s) on average, so output and events keep flowing; with --mix all
  (the default) they run in turn every kind of side channel duet has,
  each with its test agent (server/tests/fixtures/): the demo agent
  (dual_output), a fake Claude Code (claude: its hooks), a stream-json
  agent, a print-mode agent (one process per prompt), an ACP agent, and
  a plain `cat` (none: no prompts); --mix demo runs the demo agent only;
- --clients (200) WebSocket clients, each attached to a random session for
  a random 1-20 s, then gone (a clean close or a dropped connection) and
  back with ?from=SEQ (the last event seq it had), which must resume with
  the next event: no event twice, none out of order;
- one session purged (DELETE ?purge=true) and a new one created every
  --churn-every (5s).

Every --sample (10s) it writes duet's open fds, RSS and thread count (from
/proc) and the sessions it holds in memory (duet_sessions_in_memory) to a CSV (--csv, default soak-<time>.csv in the current directory)
and at the end compares the last third of the samples with the middle
third (whether it *ends* flat). Exit status 0 when all four end flat, 1 when one grew, 2 when
resumes went wrong. Only loopback traffic; everything is bounded by
--duration; no third-party Python packages (a small WebSocket client is
below).
"""

import argparse
import asyncio
import base64
import csv
import http.client
import json
import os
import random
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"


def duration(text):
    """'30m', '90s', '1h' or plain seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


class Stats:
    def __init__(self):
        self.connects = 0
        self.connected = 0
        self.events = 0
        self.output_bytes = 0
        self.resumes = 0
        self.resume_errors = []
        self.prompts = 0
        self.rest_errors = 0
        self.ws_errors = 0
        self.ws_error_kinds = {}
        self.created = 0
        self.purged = 0


# --- REST (blocking http.client, run in threads) ---------------------------


def rest(port, method, path, body=None, timeout=30):
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw) if raw else None
        except ValueError:
            return resp.status, raw
    finally:
        conn.close()


async def arest(port, method, path, body=None):
    return await asyncio.to_thread(rest, port, method, path, body)


# --- A minimal WebSocket client (RFC 6455, client side) ---------------------


async def ws_connect(port, path):
    reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 22)
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    status = head.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        writer.close()
        raise ConnectionError(status.decode(errors="replace"))
    return reader, writer


def ws_frame(opcode, payload=b""):
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + body


async def ws_read(reader):
    """One frame: (opcode, payload)."""
    b0, b1 = await reader.readexactly(2)
    n = b1 & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", await reader.readexactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", await reader.readexactly(8))
    if b1 & 0x80:
        await reader.readexactly(4)  # servers never mask; tolerate it anyway
    return b0 & 0x0F, await reader.readexactly(n)


# --- The load ----------------------------------------------------------------


# --- the agents: one profile per kind of side channel -------------------------

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "server", "tests", "fixtures")


def toml_str(s):
    return json.dumps(s)  # a JSON string is a TOML basic string


def mix_config(mix):
    """The config file's text, and the profiles sessions are made of in turn
    (with whether each takes prompts through its side channel)."""
    py = lambda script, *extra: ["python3", os.path.join(FIXTURES, script), *extra]
    kinds = [
        ("demo", "dual_output", ["{duet}", "demo-agent", "--json-file", "{events_file}", "--input-file", "{input_file}"]),
        ("claude", "claude", py("fake_claude.py", "--settings", "{claude_settings}")),
        ("stream-json", "stream_json", py("fake_stream_json.py")),
        ("print", "stream_json_per_turn", py("fake_print_agent.py", "-p", "{prompt}")),
        ("acp", "acp", py("fake_acp_agent.py")),
        ("cat", "none", ["cat"]),
    ]
    if mix == "demo":
        kinds = kinds[:1]
    text = []
    for name, channel, argv in kinds:
        text.append("[[profile]]")
        text.append(f"name = {toml_str(name)}")
        text.append(f"command = {toml_str(argv[0])}")
        text.append("args = [" + ", ".join(toml_str(a) for a in argv[1:]) + "]")
        text.append(f"channel = {toml_str(channel)}\n")
    return "\n".join(text), [(name, channel != "none") for name, channel, _ in kinds]


class Soak:
    def __init__(self, args, port, profiles):
        self.args = args
        self.port = port
        self.stats = Stats()
        self.sessions = []  # live session ids
        self.profiles = profiles  # (name, takes prompts), made in turn
        self.made = 0
        self.typed = set()  # sessions that take keys, not prompts
        self.end = 0.0

    def live(self):
        return time.monotonic() < self.end

    async def create_session(self):
        profile, prompts = self.profiles[self.made % len(self.profiles)]
        self.made += 1
        status, info = await arest(self.port, "POST", "/api/sessions", {"profile": profile, "cols": 100, "rows": 30})
        if status != 201:
            self.stats.rest_errors += 1
            return None
        self.stats.created += 1
        self.sessions.append(info["id"])
        if not prompts:
            self.typed.add(info["id"])
        return info["id"]

    async def prompts(self, k):
        n = 0
        while self.live():
            await asyncio.sleep(random.expovariate(1 / self.args.prompt_every))
            if not self.sessions:
                continue
            sid = random.choice(self.sessions)
            if sid in self.typed:
                continue  # a terminal-only program: the clients' keys reach it
            n += 1
            text = f"soak prompt {k}-{n}: tell me about the weather in a few sentences"
            status, _ = await arest(self.port, "POST", f"/api/sessions/{sid}/submit", {"text": text})
            if status < 300:
                self.stats.prompts += 1
            elif status != 404:  # a purged session is expected
                self.stats.rest_errors += 1

    async def churn(self):
        while self.live():
            await asyncio.sleep(self.args.churn_every)
            if not self.live() or not self.sessions:
                continue
            sid = self.sessions.pop(random.randrange(len(self.sessions)))
            self.typed.discard(sid)
            status, _ = await arest(self.port, "DELETE", f"/api/sessions/{sid}?purge=true")
            if status == 204:
                self.stats.purged += 1
            else:
                self.stats.rest_errors += 1
            await self.create_session()

    async def client(self, k):
        sid, last = None, 0
        while self.live():
            if sid is None or sid not in self.sessions or random.random() < 0.1:
                if not self.sessions:
                    await asyncio.sleep(1)
                    continue
                sid, last = random.choice(self.sessions), 0
            stay = random.uniform(1, 20)
            try:
                last = await asyncio.wait_for(self.attach(sid, last, stay), stay + 10)
            except (OSError, asyncio.IncompleteReadError, ConnectionError, asyncio.TimeoutError) as e:
                if sid in self.sessions:  # one purged under it is expected
                    self.stats.ws_errors += 1
                    kind = type(e).__name__
                    self.stats.ws_error_kinds[kind] = self.stats.ws_error_kinds.get(kind, 0) + 1
                sid = None
            await asyncio.sleep(random.uniform(0, 2))

    async def attach(self, sid, last, stay):
        """Attaches with ?from=last for a while; returns the last seq seen."""
        resumed = last > 0
        reader, writer = await ws_connect(self.port, f"/api/sessions/{sid}/ws?from={last}")
        self.stats.connects += 1
        self.stats.connected += 1
        if resumed:
            self.stats.resumes += 1
        deadline = time.monotonic() + stay
        try:
            while time.monotonic() < deadline and self.live():
                try:
                    op, payload = await asyncio.wait_for(ws_read(reader), max(0.01, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    break
                if op == 2:
                    self.stats.output_bytes += len(payload)
                elif op == 1:
                    msg = json.loads(payload)
                    if msg.get("type") == "event":
                        seq = msg["seq"]
                        if seq <= last:
                            self.stats.resume_errors.append(f"{sid}: seq {seq} after {last}")
                        last = seq
                        self.stats.events += 1
                elif op == 8:
                    return last
                elif op == 9:
                    writer.write(ws_frame(10, payload))
            if random.random() < 0.5:
                writer.write(ws_frame(8, struct.pack("!H", 1000)))
                await writer.drain()
            return last
        finally:
            self.stats.connected -= 1
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass


def sample(pid):
    """fds, RSS, threads, and RSS split into anonymous memory (the heap,
    stacks) and file pages (duet's own code as it is paged in)."""
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    status = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                status[key] = int(value.split()[0])
    return fds, status.get("VmRSS", 0), status.get("Threads", 0), status.get("RssAnon", 0), status.get("RssFile", 0)


def slope_per_min(rows, name):
    """Least-squares slope of `name` against time, per minute."""
    n = len(rows)
    if n < 2:
        return 0.0
    ts = [r["t_s"] / 60 for r in rows]
    ys = [r[name] for r in rows]
    mt, my = sum(ts) / n, sum(ys) / n
    var = sum((t - mt) ** 2 for t in ts)
    return sum((t - mt) * (y - my) for t, y in zip(ts, ys)) / var if var else 0.0


def verdict(rows):
    """Whether the run *ends* flat: the mean of the last third against the
    middle third. The first third is shown but not judged: it holds the
    ramp while the sessions' bounded buffers fill and the first sessions
    are replaced (docs/soak.md), which says nothing about a leak; a leak
    keeps growing into the last third."""
    if len(rows) < 3:
        return False, ["  fewer than 3 samples: no verdict"]
    third = len(rows) // 3
    first, middle, last = rows[:third], rows[third:-third], rows[-third:]
    out, flat = [], True
    # (column, allowed growth: relative, absolute)
    judged = [("fds", 0.10, 10), ("rss_kib", 0.10, 2048), ("threads", 0.10, 4), ("in_memory", 0.10, 2)]
    for name, rel, slack in (j for j in judged if j[0] in rows[0]):
        a, m, b = (sum(r[name] for r in part) / len(part) for part in (first, middle, last))
        ok = b <= m * (1 + rel) + slack
        flat &= ok
        out.append(
            f"  {name:8} first third {a:10.1f}  middle {m:10.1f}  last {b:10.1f}"
            f"  last third's slope {slope_per_min(last, name):+9.1f}/min  {'flat' if ok else 'GREW'}"
        )
    return flat, out


def in_memory(port):
    """duet_sessions_in_memory, from /metrics."""
    status, text = rest(port, "GET", "/metrics")
    if status != 200:
        return -1
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for line in str(text).splitlines():
        if line.startswith("duet_sessions_in_memory "):
            return int(float(line.split()[1]))
    return -1


async def run(args, pid, port, writer_csv, rows, profiles):
    soak = Soak(args, port, profiles)
    soak.end = time.monotonic() + args.duration
    for _ in range(args.sessions):
        if await soak.create_session() is None:
            raise SystemExit("could not create the sessions (see the duet log)")
    tasks = [asyncio.create_task(soak.client(k)) for k in range(args.clients)]
    tasks += [asyncio.create_task(soak.prompts(k)) for k in range(4)]
    tasks.append(asyncio.create_task(soak.churn()))
    # Let every client attach and the event caches fill before the first
    # sample, so the first third is not a ramp.
    await asyncio.sleep(min(args.warmup, args.duration / 10))
    start = time.monotonic()
    while soak.live():
        fds, rss, threads, anon, file = sample(pid)
        held = await asyncio.to_thread(in_memory, port)
        s = soak.stats
        row = {
            "t_s": round(time.monotonic() - start),
            "fds": fds,
            "rss_kib": rss,
            "threads": threads,
            "rss_anon_kib": anon,
            "rss_file_kib": file,
            "sessions": len(soak.sessions),
            "in_memory": held,
            "ws_connected": s.connected,
            "ws_connects": s.connects,
            "events": s.events,
            "output_bytes": s.output_bytes,
            "prompts": s.prompts,
            "purged": s.purged,
            "errors": s.rest_errors + s.ws_errors,
        }
        rows.append(row)
        writer_csv.writerow(row)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        await asyncio.sleep(min(args.sample, max(0, soak.end - time.monotonic())))
    await asyncio.gather(*tasks, return_exceptions=True)
    return soak.stats


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=duration, default=duration("30m"), help="e.g. 30m (default), 5m, 90s")
    p.add_argument("--duet", help="the duet binary (default: target/release/duet, else target/debug/duet)")
    p.add_argument("--sessions", type=int, default=50)
    p.add_argument("--mix", choices=["all", "demo"], default="all", help="every kind of side channel (default), or the demo agent only")
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--sample", type=duration, default=10.0, help="seconds between samples (10)")
    p.add_argument("--prompt-every", type=duration, default=15.0, help="mean seconds between prompts per sender (4 senders)")
    p.add_argument("--churn-every", type=duration, default=5.0, help="seconds between purge+create (default 5s: the 50 sessions turn over within the run; see docs/soak.md)")
    p.add_argument("--warmup", type=duration, default=60.0, help="seconds before the first sample (60; at most a tenth of the run)")
    p.add_argument("--csv", help="where the samples go (default soak-<time>.csv)")
    p.add_argument("--verdict", metavar="CSV", help="only print the verdict on an earlier run's CSV")
    args = p.parse_args()
    if args.verdict:
        with open(args.verdict) as f:
            rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
        flat, lines = verdict(rows)
        print("\n".join(lines) + "\nverdict: " + ("flat" if flat else "GROWING"))
        return 0 if flat else 1
    if args.sessions < 1 or args.clients < 0 or args.duration <= 0:
        p.error("need at least one session and a positive duration")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    duet = args.duet or next(
        (c for c in (f"{root}/target/release/duet", f"{root}/target/debug/duet") if os.path.exists(c)), None
    )
    if not duet:
        raise SystemExit("no duet binary: cargo build --release -p duet-server (or pass --duet)")
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="duet-soak-")
    state = os.path.join(tmp, "state")
    log = open(os.path.join(tmp, "duet.log"), "w")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUET_")}
    env["RUST_LOG"] = "warn"
    config, profiles = mix_config(args.mix)
    config_path = os.path.join(tmp, "duet.toml")
    with open(config_path, "w") as f:
        f.write(config)
    proc = subprocess.Popen(
        [duet, "serve", "--listen", f"{HOST}:{port}", "--no-auth", "--state-dir", state, "--config", config_path,
         "--max-sessions", str(args.sessions + 10), "--max-clients", str(args.clients + 10)],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    rows = []
    path = args.csv or time.strftime("soak-%Y%m%d-%H%M%S.csv")
    try:
        for _ in range(200):
            try:
                if rest(port, "GET", "/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("duet did not come up; see " + log.name)
        print(f"duet {duet} pid {proc.pid} on {HOST}:{port}; {args.sessions} sessions "
              f"({', '.join(name for name, _ in profiles)}), {args.clients} clients, "
              f"{args.duration:.0f} s; samples to {path}", flush=True)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["t_s", "fds", "rss_kib", "threads", "rss_anon_kib", "rss_file_kib",
                                              "sessions", "in_memory", "ws_connected",
                                              "ws_connects", "events", "output_bytes", "prompts", "purged", "errors"])
            w.writeheader()
            stats = asyncio.run(run(args, proc.pid, port, w, rows, profiles))
        if proc.poll() is not None:
            raise SystemExit(f"duet exited during the run ({proc.returncode}); see {log.name}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    flat, lines = verdict(rows)
    print(f"\n{len(rows)} samples; {stats.connects} WebSocket connects ({stats.resumes} resumes with ?from=SEQ), "
          f"{stats.events} events, {stats.output_bytes / 1e6:.1f} MB of output, {stats.prompts} prompts, "
          f"{stats.purged} sessions purged and replaced; {stats.rest_errors} REST and {stats.ws_errors} WebSocket errors {stats.ws_error_kinds or ''}")
    print("\n".join(lines))
    if stats.resume_errors:
        print(f"RESUME ERRORS ({len(stats.resume_errors)}): " + "; ".join(stats.resume_errors[:5]))
        shutil.rmtree(tmp, ignore_errors=True)
        return 2
    print("verdict: " + ("flat" if flat else "GROWING (see the CSV)"))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
