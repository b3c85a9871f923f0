"""Receiving a message: resolve the sender, buffer it, and schedule the flush checks.

No model is called here and nothing slow happens: the webhook must answer Twilio fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from maestro.domain.consent import consent_change, is_bare_consent_keyword
from maestro.domain.models import (
    Attestation,
    Channel,
    FlushTrigger,
    MediaRef,
    conversation_id_for,
)
from maestro.domain.safety import safety_floor
from maestro.domain.sign_off import is_sign_off
from maestro.ports.conversations import AppendResult, ConversationBuffer, InboundDraft
from maestro.ports.messaging import ConsentStore
from maestro.ports.stores import PartyDirectory
from maestro.ports.workflows import MAX_DEBOUNCE_DELAY_SECONDS, DebounceQueue, DebounceSignal


def app_message_id(party_phone: str, message_id: str) -> str:
    """The stored id of an in-app message: the app's own id within its sender's conversation,
    so one sender's id never swallows another's message and a redelivery is the same one."""
    return f"app:{conversation_id_for(party_phone)}:{message_id}"


@dataclass(frozen=True)
class Inbound:
    """A message as a webhook received it, before the sender is resolved."""

    message_id: str
    channel: Channel
    from_phone: str
    to_phone: str | None
    body: str
    media: tuple[MediaRef, ...]
    received_at: datetime
    trigger: FlushTrigger | None = None  # e.g. a call transcript ends the conversation
    attestation: Attestation | None = None  # a call's verified STIR/SHAKEN attestation


class Ingestor:
    def __init__(
        self,
        buffer: ConversationBuffer,
        parties: PartyDirectory,
        queue: DebounceQueue,
        *,
        idle_window_seconds: int,
        max_wait_seconds: int,
        urgent_idle_window_seconds: int | None = None,
        severity_probe: bool = False,
        probe_queue: DebounceQueue | None = None,
        consent: ConsentStore | None = None,
    ) -> None:
        self._consent = consent
        self._buffer = buffer
        self._parties = parties
        self._queue = queue
        self._idle = idle_window_seconds
        # Only a shorter window is worth an early check.
        self._urgent_idle = (
            urgent_idle_window_seconds
            if urgent_idle_window_seconds is not None
            and urgent_idle_window_seconds < idle_window_seconds
            else None
        )
        self._max_wait = max_wait_seconds
        self._probe = severity_probe
        # The prober's own queue (docs/headroom.md); none: the debounce queue, the flusher probes.
        self._probe_queue = probe_queue if probe_queue is not None else queue

    def receive(self, inbound: Inbound) -> AppendResult:
        party = self._parties.by_phone(inbound.from_phone)
        draft = InboundDraft(
            message_id=inbound.message_id,
            conversation_id=conversation_id_for(inbound.from_phone),
            channel=inbound.channel,
            from_phone=inbound.from_phone,
            to_phone=inbound.to_phone,
            body=inbound.body,
            media=inbound.media,
            received_at=inbound.received_at,
            # Never guess a person: only an exact directory match binds the sender.
            sender_party_id=party.party_id if party else None,
            unknown_sender=party is None,
            attestation=inbound.attestation,
        )
        result = self._buffer.append(draft)
        self._note_consent(inbound, result)
        at = inbound.received_at
        if result.duplicate:
            # A retry of a message already stored (Twilio's fallback after the primary stored it
            # and then failed, a redelivery). If its debounce signal was lost, this re-sends one
            # for the conversation's latest seq, as urgent as the message itself: a gas report
            # whose expedite signal was lost is not left to the idle window. Claims are atomic,
            # so at worst the flusher finds nothing to do.
            meta = result.meta
            if meta.has_unflushed:
                stored = result.message
                trigger = None
                if stored.seq > meta.flushed_through:  # the kept message itself still waits
                    trigger = self._trigger(inbound.trigger, stored.body)
                delay = 0 if trigger is not None else self._idle
                self._signal(meta.conversation_id, meta.seq, trigger, at, delay)
            return result

        seq = result.message.seq
        trigger = self._trigger(inbound.trigger, inbound.body)
        if trigger is not None:
            self._signal(draft.conversation_id, seq, trigger, at, 0)
        else:
            self._signal(draft.conversation_id, seq, None, at, self._idle)
            if self._urgent_idle is not None and party is not None:
                # The flusher reads the sender's memory then (not here: the webhook must answer
                # fast): with something urgent outstanding, the shorter window flushes.
                self._queue.send(
                    DebounceSignal(
                        conversation_id=draft.conversation_id,
                        seq=seq,
                        urgent_for=party.party_id,
                        sent_at=at,
                    ),
                    self._urgent_idle,
                )
            if self._probe and party is not None and not is_bare_consent_keyword(inbound.body):
                # The cheap model reads it at once (in the prober, not here: the webhook must
                # answer fast); an emergency the floor missed then expedites the flush. Not for
                # a number nobody knows: it costs no model call (the floor still reads it); nor for
                # a bare STOP or START (Twilio answered it).
                self._probe_queue.send(
                    DebounceSignal(
                        conversation_id=draft.conversation_id,
                        seq=seq,
                        probe=draft.message_id,
                        sent_at=at,
                    ),
                    0,
                )
        if result.opened_batch and trigger is None:
            # The backstop for a sender who never pauses: look again once max_wait has passed.
            delay = min(self._max_wait, MAX_DEBOUNCE_DELAY_SECONDS)
            self._signal(draft.conversation_id, seq, None, at, delay)
        return result

    def _note_consent(self, inbound: Inbound, result: AppendResult) -> None:
        """A text that is an opt-out or opt-in keyword sets its sender's consent at once, as of
        when the message was first stored (a redelivery sets the same). The message is stored and
        packaged like any other: an opted-out sender's emergency still pages the PM."""
        if self._consent is None or inbound.channel is not Channel.SMS:
            return  # Twilio's keywords are SMS keywords: an in-app "stop" opts out of nothing
        change = consent_change(inbound.body)
        if change is not None:
            self._consent.record(inbound.from_phone, change, result.message.received_at)

    @staticmethod
    def _trigger(given: FlushTrigger | None, body: str) -> FlushTrigger | None:
        """Flush at once for the channel's own reason (a call ended), when the safety floor
        fires on the words, or when the words close the conversation ("thanks, bye")."""
        if given is not None:
            return given
        if safety_floor(body) is not None:
            return FlushTrigger.URGENCY_EXPEDITE
        return FlushTrigger.CONVERSATION_ENDED if is_sign_off(body) else None

    def request_flush(self, conversation_id: str, trigger: FlushTrigger, at: datetime) -> bool:
        """Flush now (the assistant's kickoff, a sign-off). False when nothing is buffered."""
        meta = self._buffer.meta(conversation_id)
        if meta is None or not meta.has_unflushed:
            return False
        self._signal(conversation_id, meta.seq, trigger, at, 0)
        return True

    def _signal(
        self, conversation_id: str, seq: int, trigger: FlushTrigger | None, at: datetime, delay: int
    ) -> None:
        self._queue.send(
            DebounceSignal(conversation_id=conversation_id, seq=seq, trigger=trigger, sent_at=at),
            delay,
        )
