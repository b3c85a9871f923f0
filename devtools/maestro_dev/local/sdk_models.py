"""One botocore data loader for every SDK session the embedded stack makes.

Each maestro function builds its own boto3 clients (``maestro.adapters.aws.client``, one
session per service, as in a Lambda container), and the stack clears them between stacks so a
fault injected into one function's client reaches no other. Every new botocore session has a
new data loader, which reads and parses the service models' JSON again: about 1 s of CPU per
stack start (of about 3 s, measured with cProfile), paid by every test that starts a stack.

The models are read-only data shared by every client of a session already (the loader caches
them per instance), so :func:`one_sdk_loader` makes every session in the process share one
loader per data path. The clients, their sessions, credentials and event hooks stay apart.
Devtools only; the runtime never imports this.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["one_sdk_loader"]

_LOADERS: dict[str | None, Any] = {}
_LOCK = threading.Lock()


class _UniquePaths(list[str]):
    """A loader's search paths, to which each boto3 session appends its own data folder: kept
    once, or a shared loader's list (and each lookup's walk over it) grows with every session."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


@contextmanager
def one_sdk_loader() -> Iterator[None]:
    import botocore.session

    original = botocore.session.create_loader

    def create_loader(search_path_string: str | None = None) -> Any:
        with _LOCK:
            loader = _LOADERS.get(search_path_string)
            if loader is None:
                loader = original(search_path_string)
                loader._search_paths = _UniquePaths(loader.search_paths)  # type: ignore[attr-defined]
                _LOADERS[search_path_string] = loader
            return loader

    with mock.patch.object(botocore.session, "create_loader", create_loader):
        yield
