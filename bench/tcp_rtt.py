#!/usr/bin/env python3
"""The floor under any TCP gateway's keystroke echo on this machine: the
round trip of one byte between two processes over loopback TCP, with
TCP_NODELAY and blocking sockets (each direction wakes one process, as a
WebSocket client and server would). Compare with duet-bench's echo figures;
see docs/benchmarks.md.

    python3 bench/tcp_rtt.py [N]
"""

import os
import socket
import sys
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
WARMUP = 200


def nodelay(sock):
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def main():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    if os.fork() == 0:
        conn, _ = server.accept()
        nodelay(conn)
        while True:
            data = conn.recv(64)
            if not data:
                os._exit(0)
            conn.sendall(data)
    client = socket.create_connection(("127.0.0.1", port))
    nodelay(client)
    samples = []
    for i in range(N + WARMUP):
        start = time.perf_counter_ns()
        client.sendall(b"x")
        client.recv(64)
        if i >= WARMUP:
            samples.append(time.perf_counter_ns() - start)
    client.close()
    os.wait()
    samples.sort()
    p50 = samples[N // 2] / 1000
    p99 = samples[N * 99 // 100] / 1000
    print(f"loopback TCP round trip, {N} one-byte messages: p50 {p50:.1f} µs, p99 {p99:.1f} µs")


if __name__ == "__main__":
    main()
