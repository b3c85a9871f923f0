"""The severity probe at ingestion (seed ADR-0059 I5): each new message, read by the cheap model
with the sender's open contexts, as soon as it is buffered.

The webhook only buffers and signals (it answers fast and calls no model); the flusher picks the
probe signal up at once and asks. An emergency the floor missed ("my daughter fell and is not
responding") expedites the flush, so it is escalated within one flush, not after the idle
window. At most one call per message (a conditional claim: a redelivered signal asks nothing
and gets the stored answer, so a flush that failed after an emergency reading is still
expedited), none when the floor has already fired (it expedites on its own) or the sender is
not in the directory (an unknown number costs no model call), and when the model is down the
floor still decides alone. The answer is kept with the message, so a one-message package's
pre-check reuses it instead of asking again.
"""

from __future__ import annotations

from pydantic import ValidationError

from maestro.brain.model_port import ModelError
from maestro.brain.stage_models import Models
from maestro.domain.models import PreCheckResult, context_for_work_order
from maestro.domain.safety import safety_floor
from maestro.observability import count, logger
from maestro.ports.conversations import ConversationBuffer
from maestro.ports.stores import PartyDirectory, WorkOrderStore

__all__ = ["Prober"]


class Prober:
    def __init__(
        self,
        models: Models,
        buffer: ConversationBuffer,
        parties: PartyDirectory,
        work_orders: WorkOrderStore,
    ) -> None:
        self._models = models
        self._buffer = buffer
        self._parties = parties
        self._work_orders = work_orders

    def probe(self, message_id: str) -> PreCheckResult | None:
        """The model's triage of one message: asked once, then its stored answer (a redelivered
        signal). None when the floor fired, the sender is unknown, the model failed (the floor
        alone decides then) or a first ask claimed it and has not stored an answer yet."""
        triage = self._models.triage
        message = self._buffer.get_message(message_id)
        if triage is None or message is None or safety_floor(message.body) is not None:
            return None
        sender = self._parties.by_phone(message.from_phone)
        if sender is None:
            return None  # a number nobody knows costs no model call (the ingestor sends none)
        if not self._buffer.claim_probe(message_id):
            # Probed once already: a redelivered signal asks nothing, but gets what the first
            # ask read (its flush may have failed after an emergency reading).
            return message.probe
        lines = [
            context_for_work_order(wo, party_id=sender.party_id).line()
            for wo in self._work_orders.open_for_party(sender.party_id)
        ][:12]
        try:
            with self._models.scope(message.conversation_id):
                result = triage.probe(message, lines)
        except (ModelError, ValueError, ValidationError) as error:
            count("ProbeFailures")
            logger.warning(
                "severity probe failed", extra={"message_id": message_id, "error": str(error)[:200]}
            )
            return None
        self._buffer.store_probe(message, result)
        count("ModelCalls", 1, stage="probe")
        return result
