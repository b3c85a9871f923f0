"""The flusher: turns debounce signals into packages, exactly once per flush.

A signal says "look at this conversation as of seq n". The flusher flushes when
- the signal carries a trigger (kickoff, conversation ended, urgency expedite): at once;
- the signal is an early idle check (the urgent idle window) and the sender is still quiet with
  something urgent outstanding in memory (``maestro.domain.expedite``): an urgency expedite;
- the oldest unflushed message has waited ``max_wait``: a chatty sender cannot starve the flush;
- the signal's seq is still the conversation's latest: the sender went quiet for the idle window.
It claims the messages with a conditional write (two racing flushers: one package), names the
package deterministically from (conversation, flush number), and starts the execution named by
the package id (an existing one counts as done). A claim that was made but never started (a
crash in between) is started on the next signal for that conversation.

A package is bounded: at most ``MAX_PACKAGE_MESSAGES`` messages and ``MAX_PACKAGE_BYTES`` of
text (a single larger message still makes a package of its own). What does not fit is flushed
at once as the next package, in order, for the same trigger: nothing is dropped.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from maestro.domain.expedite import urgent_outstanding
from maestro.domain.models import FlushTrigger, Message, Package
from maestro.observability import count, logger
from maestro.ports.conversations import ConversationBuffer, ConversationMeta, FlushClaim
from maestro.ports.platform import Clock
from maestro.ports.stores import StateStore, WorkOrderStore
from maestro.ports.workflows import DebounceQueue, DebounceSignal, WorkflowStarter

MAX_CLAIM_ATTEMPTS = 5
MAX_PACKAGE_MESSAGES = 50
"""As many as the brain's window shows of one package (``WindowLimits.max_package_messages``)."""
MAX_PACKAGE_BYTES = 64 * 1024
MAX_PACKAGES_PER_SIGNAL = 200
"""A backlog larger than this is left for the next signal (the max-wait check sends one)."""
STRANDED_GRACE = timedelta(seconds=60)
"""How long past ``max_wait`` a wait must be before the stranded sweep takes it: the max-wait
signal itself comes at ``max_wait``."""
STRANDED_DAYS = 3
"""How far back the stranded sweep looks (days before the grace): further back, the debounce
queue's dead-letter alarm has long since fired."""


def package_size(messages: list[Message]) -> int:
    """How many of ``messages`` (in order) the next package takes: at least one, then as many
    as fit under both bounds."""
    taken, size = 0, 0
    for message in messages[:MAX_PACKAGE_MESSAGES]:
        size += len(message.body.encode()) + sum(len(u.encode()) for u in message.media_urls)
        if taken and size > MAX_PACKAGE_BYTES:
            break
        taken += 1
    return taken


def flush_trigger(
    meta: ConversationMeta | None,
    signal: DebounceSignal,
    now: datetime,
    max_wait: timedelta,
) -> FlushTrigger | None:
    """Whether to flush now, and why. Pure."""
    if meta is None or not meta.has_unflushed:
        return None
    if signal.trigger is not None:
        return signal.trigger
    if signal.urgent_for is not None:
        return None  # an early check the sender's memory did not make urgent: the idle one comes
    if meta.first_unflushed_at is not None and now - meta.first_unflushed_at >= max_wait:
        return FlushTrigger.MAX_WAIT
    if signal.seq >= meta.seq:
        return FlushTrigger.IDLE_TIMEOUT
    return None  # a newer message arrived; its own signal will come


class Flusher:
    def __init__(
        self,
        buffer: ConversationBuffer,
        starter: WorkflowStarter,
        clock: Clock,
        *,
        max_wait_seconds: int,
        work_orders: WorkOrderStore | None = None,
        states: StateStore | None = None,
        probe_queue: DebounceQueue | None = None,
    ) -> None:
        """``probe_queue``: where a probe signal that came here goes on to (the prober's)."""
        self._buffer = buffer
        self._starter = starter
        self._clock = clock
        self._max_wait = timedelta(seconds=max_wait_seconds)
        self._work_orders = work_orders
        self._states = states
        self._probe_queue = probe_queue

    def handle(self, signal: DebounceSignal) -> list[Package]:
        """Process one signal; returns the packages started (usually none or one; more when a
        backlog is larger than one package)."""
        started = [
            self._start(claim) for claim in self._buffer.unstarted_claims(signal.conversation_id)
        ]
        if signal.probe is not None:
            self._hand_on_probe(signal)
            return started
        if signal.urgent_for is not None:
            if self._urgent(signal) is None:
                return started  # nothing urgent: the idle window's own signal decides
            signal = signal.model_copy(
                update={"trigger": FlushTrigger.URGENCY_EXPEDITE, "urgent_for": None}
            )
        attempts = 0
        while attempts < MAX_CLAIM_ATTEMPTS and len(started) < MAX_PACKAGES_PER_SIGNAL:
            meta = self._buffer.meta(signal.conversation_id)
            now = self._clock.now()
            trigger = flush_trigger(meta, signal, now, self._max_wait)
            if trigger is None or meta is None:
                return started
            window = self._buffer.unflushed(meta, MAX_PACKAGE_MESSAGES + 1)
            taken = package_size(window)
            through = window[taken - 1] if taken and taken < len(window) else None
            following = window[taken] if through is not None else None
            claim = self._buffer.claim_flush(meta, trigger, now, through, following)
            if claim is None:
                attempts += 1  # lost to a rival flusher or a newer message: decide again
                continue
            started.append(self._start(claim))
            if claim.through_seq >= meta.seq:
                return started
            # The rest did not fit: it is the next package, at once and in order.
            signal = signal.model_copy(update={"trigger": trigger, "seq": meta.seq})
        return started

    def _hand_on_probe(self, signal: DebounceSignal) -> None:
        """A probe signal sent here (by a webhook without the probe queue's setting, or before
        the prober was deployed) goes on to the prober's queue: the flusher calls no model, and
        nothing in flight is lost while the setting rolls out (docs/headroom.md)."""
        if self._probe_queue is not None:
            self._probe_queue.send(signal, 0)
            return
        # No probe queue configured: the safety floor has read the message in the webhook
        # already, and the idle window flushes it.
        count("ProbeSignalsUnrouted")
        logger.warning("a probe signal and no probe queue", extra={"message_id": signal.probe})

    def _urgent(self, signal: DebounceSignal) -> str | None:
        """Why the early check flushes (something urgent outstanding for a sender still quiet
        since the signal's message), or None."""
        if signal.urgent_for is None or self._work_orders is None or self._states is None:
            return None
        meta = self._buffer.meta(signal.conversation_id)
        if meta is None or not meta.has_unflushed or signal.seq < meta.seq:
            return None  # flushed already, or a newer message: its own early check comes
        work_orders = self._work_orders.open_for_party(signal.urgent_for)
        states = {
            wo.wo_id: state
            for wo in work_orders
            if wo.is_open and (state := self._states.get(wo.wo_id)) is not None
        }
        return urgent_outstanding(work_orders, states, self._clock.now())

    def rescue(self) -> list[Package]:
        """The stranded sweep: flush every conversation whose oldest unflushed message has
        waited past ``max_wait`` (and the grace): its flush signal was lost, or every try of it
        failed. Each goes through :meth:`handle` (the max-wait trigger), which also starts a
        claim that was made and never started."""
        now = self._clock.now()
        started: list[Package] = []
        for conversation_id in self._buffer.stranded(
            now - self._max_wait - STRANDED_GRACE, STRANDED_DAYS
        ):
            meta = self._buffer.meta(conversation_id)
            if meta is None or not meta.has_unflushed:
                continue  # flushed since the index was read
            started += self.handle(
                DebounceSignal(conversation_id=conversation_id, seq=meta.seq, sent_at=now)
            )
        return started

    def _start(self, claim: FlushClaim) -> Package:
        messages = self._buffer.messages_for(claim)
        package = Package(
            package_id=claim.package_id,
            conversation_id=claim.conversation_id,
            flush_number=claim.flush_number,
            trigger=claim.trigger,
            sender_phone=messages[0].from_phone,
            messages=tuple(messages),
            flushed_at=claim.claimed_at,
        )
        self._starter.start(package)
        self._buffer.mark_started(claim)
        return package
