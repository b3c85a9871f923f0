"""Each Lambda invocation's logger context on the embedded stack, as a fresh Lambda's would be.

In the cloud every function is its own process: the keys one handler appends to maestro's
Powertools logger (``function_name``, the correlation id, …) die with its invocation. The
embedded stack runs every function in one process, on many threads, so without this a flusher's
log line could carry the ``function_name`` of the persist step that ran before it.

:func:`invocation` names the function on the calling thread (Powertools' thread-local keys,
which win over the logger's shared ones, so a handler running at the same time on another
thread cannot lend this one its name), and on the way out clears both: the next invocation,
on any thread, starts from the service's bare keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from maestro.observability import logger

INVOCATION_KEYS = (
    "function_name",
    "function_memory_size",
    "function_arn",
    "function_request_id",
    "correlation_id",
)
"""What ``Logger.inject_lambda_context`` appends that names an invocation (``cold_start`` is
left to it: the process's, not the invocation's)."""


@contextmanager
def invocation(
    function_name: str,
    request_id: str,
    *,
    function_arn: str = "",
    correlation_id: str = "",
) -> Iterator[None]:
    """One invocation of ``function_name`` (for ``correlation_id``, e.g. a package id, as the
    handler's ``correlation_id_path`` picks it): its log lines name it, and nothing it appended
    to the logger outlives it."""
    keys: dict[str, object] = dict.fromkeys(INVOCATION_KEYS)  # None: not this invocation's
    keys.update(
        function_name=function_name,
        function_request_id=request_id,
        function_arn=function_arn or None,
        correlation_id=correlation_id or None,
    )
    logger.thread_safe_clear_keys()
    logger.thread_safe_append_keys(**keys)
    try:
        yield
    finally:
        logger.thread_safe_clear_keys()
        logger.clear_state()
