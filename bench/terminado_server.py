"""A minimal terminado server for `duet-bench --peer terminado`.

Serves `/websocket/<name>` with terminado's `NamedTermManager`: the first
connection to a name starts `COMMAND ARGS...` on a new PTY, later connections
to the same name share it (as Jupyter's terminals do). Listens on
127.0.0.1:0 and prints `terminado is ready: PORT` once it accepts.

Usage: terminado_server.py COMMAND [ARGS...]
(run with the venv that `duet-bench` sets up under .cache/terminado-venv).
"""

import asyncio
import sys

import tornado.web
from terminado import NamedTermManager, TermSocket


async def main() -> None:
    if len(sys.argv) < 2:
        sys.exit("usage: terminado_server.py COMMAND [ARGS...]")
    manager = NamedTermManager(
        shell_command=sys.argv[1:],
        term_settings={"type": "xterm-256color", "height": 36, "width": 120},
        extra_env={"COLORTERM": "truecolor"},
    )
    app = tornado.web.Application(
        [(r"/websocket/([^/]+)/?", TermSocket, {"term_manager": manager})],
        # Terminal output can be large; the bench never sends big messages.
        websocket_max_message_size=1 << 20,
    )
    server = app.listen(0, address="127.0.0.1")
    port = next(iter(server._sockets.values())).getsockname()[1]
    print(f"terminado is ready: {port}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await manager.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
