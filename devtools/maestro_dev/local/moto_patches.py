"""Two of moto's habits that make a long-running embedded stack slower and bigger with every
package, and what the stack does instead. Each is a context manager the stack enters for its
lifetime; leaving it restores moto. (``threads`` works around two more: a transaction's copy of
every table it names, and a key query's walk over the whole table.)

Neither changes what a caller of moto sees (``tests/integration/test_moto_patches.py`` holds
them to that). Both are workarounds for moto 5.2.5, the newest release when written, which has
neither fixed; they live here, in the devtools, and never in the runtime layer.

1. **Every model object is registered forever.** ``moto.core.common_models.BaseModel.__new__``
   appends each instance to its class's ``instances_tracked`` list, for moto server's dashboard.
   That includes every DynamoDB ``Item`` (each put, each query result's defensive copy), every
   SQS message and every copy of the state machine an execution takes: nothing is ever freed
   until the mock ends (about 7,000 objects a package). The embedded stack has no dashboard, so
   :func:`untracked_models` creates those objects without registering them.

2. **Sending a message counts the queue.** ``SQSBackend.send_message`` reads one attribute of
   the queue (``ContentBasedDeduplication``) through ``Queue.attributes``, which computes all of
   them, three of which walk every message in the queue. The events tap (``domain_events()``)
   is drained only when someone asks, so each domain event published cost more than the one
   before. :func:`uncounted_sends` lets a send skip the counts (it reads none of them);
   ``GetQueueAttributes`` still counts.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock


@contextmanager
def untracked_models() -> Iterator[None]:
    """moto's model objects are created without being kept in ``instances_tracked``."""
    from moto.core.common_models import BaseModel

    def untracked_new(cls: type, *args: Any, **kwargs: Any) -> Any:  # noqa: ARG001
        # BaseModel.__new__ without the registration: the next __new__ in the MRO, as moto calls.
        return super(BaseModel, cls).__new__(cls)  # type: ignore[misc]

    with mock.patch.object(BaseModel, "__new__", staticmethod(untracked_new)):
        yield


_COUNTS = (
    "approximate_number_of_messages",
    "approximate_number_of_messages_not_visible",
    "approximate_number_of_messages_delayed",
)


@contextmanager
def uncounted_sends() -> Iterator[None]:
    """moto's ``SendMessage`` does not count the queue's messages to read one flag."""
    from moto.sqs.models import Queue, SQSBackend

    local = threading.local()
    original_send = SQSBackend.send_message

    def send_message(self: Any, *args: Any, **kwargs: Any) -> Any:
        local.sending = True
        try:
            return original_send(self, *args, **kwargs)
        finally:
            local.sending = False

    def uncounted(counted: property) -> property:
        def count(queue: Any) -> int:
            if getattr(local, "sending", False):
                return 0  # read only by Queue.attributes, of which a send uses one flag
            return int(counted.fget(queue))  # type: ignore[misc]

        return property(count)

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(SQSBackend, "send_message", send_message))
        for name in _COUNTS:
            stack.enter_context(
                mock.patch.object(Queue, name, uncounted(inspect.getattr_static(Queue, name)))
            )
        yield


__all__ = ["uncounted_sends", "untracked_models"]
