#!/usr/bin/env python3
"""A stand-in agent for the browser benchmarks (chat-bench.mjs,
browser-bench.mjs): prints TERMINAL (a file, if given) to its terminal,
writes a recorded history of sidecar events to duet's events file at once,
waits for a go-file, then streams the tail one line every DELAY seconds.
Usage: replay_agent.py HISTORY TAIL GO_FILE EVENTS_FILE DELAY [TERMINAL [INPUT_FILE]]
(INPUT_FILE is only named, so that duet lets the chat take prompts; they are
not answered.)"""
import os
import sys
import time

history, tail, go, events, delay = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
if len(sys.argv) > 6:
    with open(sys.argv[6], "rb") as t:
        sys.stdout.buffer.write(t.read())
    sys.stdout.flush()
print("replay agent: writing the history", flush=True)
with open(events, "a") as out:
    with open(history) as h:
        out.write(h.read())
    out.flush()
    while not os.path.exists(go):
        time.sleep(0.02)
    print("replay agent: streaming", flush=True)
    with open(tail) as t:
        for line in t:
            out.write(line)
            out.flush()
            time.sleep(delay)
print("replay agent: done", flush=True)
time.sleep(3600)
