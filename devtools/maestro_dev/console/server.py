"""Serving the console: uvicorn on a socket bound to 127.0.0.1, with a fresh token per run."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from maestro_dev.console.access import ConsoleAccess
from maestro_dev.console.app import build_app
from maestro_dev.console.controller import LocalController
from maestro_dev.local.operator_access import new_token

HOST = "127.0.0.1"  # never another: the console has no internet-facing route


@dataclass
class ConsoleServer:
    controller: LocalController
    port: int = 0
    token: str = field(default_factory=new_token)
    _socket: socket.socket | None = None
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    def bind(self) -> ConsoleServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, self.port))
        self.port = sock.getsockname()[1]
        self._socket = sock
        app = build_app(
            self.controller,
            ConsoleAccess(self.token, self.port),
            stopping=lambda: self._server is not None and self._server.should_exit,
        )
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            # The streams end within a second of a stop (see build_app's ``stopping``); this
            # bounds the wait for anything else left open.
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        return self

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        """What to open: the token rides in the URL once, then lives in a cookie."""
        return f"{self.base}/?token={self.token}"

    def serve_forever(self) -> None:
        assert self._server is not None
        assert self._socket is not None
        self._server.run(sockets=[self._socket])

    def start(self) -> ConsoleServer:
        """Serve on a thread (tests); returns once it answers."""
        if self._server is None:
            self.bind()
        assert self._server is not None
        assert self._socket is not None
        server, sock = self._server, self._socket
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=[sock]), name="console", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the console did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        if self._socket is not None:
            self._socket.close()


def local_console(scenarios: Path, archive: Path, port: int = 0) -> ConsoleServer:
    return ConsoleServer(LocalController(scenarios, archive), port=port).bind()
