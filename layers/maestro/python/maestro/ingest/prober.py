"""The prober: the probe queue's consumer, off the flusher's path (docs/headroom.md).

Each probe signal names one new message. The prober runs the severity probe on it
(:class:`maestro.brain.probe.Prober`: the floor first, one model call per message at most, none
for an unknown number, the answer kept with the message). On an escalate reading it sends the
flusher an urgency expedite for that conversation and seq, delay 0: the flusher flushes at once
and never waits on a model call. A redelivered probe signal (its expedite's send failed, or
the invocation died after the call) asks nothing again: the probe returns the stored answer,
and the expedite is sent from it. Two expedites for one flush are harmless: the flusher's
claim is conditional, so the second finds nothing to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from maestro.domain.models import FlushTrigger, Route
from maestro.observability import count, logger
from maestro.ports.workflows import DebounceQueue, DebounceSignal

if TYPE_CHECKING:
    from maestro.brain.probe import Prober


class ProbeSignals:
    """Probe signals → the probe → an expedite to the debounce queue for an emergency."""

    def __init__(self, prober: Prober | None, debounce: DebounceQueue) -> None:
        self._prober = prober
        self._debounce = debounce

    def handle(self, signal: DebounceSignal) -> bool:
        """Probe ``signal``'s message; True when an expedite was sent. Raises when the send
        fails: the record is redelivered, and its probe answers from what it stored."""
        if signal.probe is None:
            raise ValueError("the probe queue carries probe signals only")
        result = self._prober.probe(signal.probe) if self._prober is not None else None
        if result is None or result.route is not Route.ESCALATE:
            return False
        self._debounce.send(
            signal.model_copy(update={"trigger": FlushTrigger.URGENCY_EXPEDITE, "probe": None}),
            0,
        )
        count("ProbeExpedites")
        logger.info(
            "the probe read an emergency: flush expedited",
            extra={"conversation_id": signal.conversation_id, "seq": signal.seq},
        )
        return True
