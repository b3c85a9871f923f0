"""What Anthropic's prompt cache would make of the requests maestro builds, offline.

The API's rules (docs/model-cost.md), as far as a price needs them: the prompt is tools, then
system, then the turns, in that order; a request writes a cache entry at each breakpoint it sends
(``maestro.brain.model_port.cacheable_breakpoints``, so none under the model's minimum) and reads
the longest prefix already written, ending at one of its breakpoints or at a turn boundary before
its last one; an entry lives five minutes from its last use and can be read only once the request
that wrote it has been answered, so requests sent together (``send(..., together=True)``) do not
read each other. Tokens are the offline estimate (characters / 4, ``approx_tokens``); prices are
relative to the uncached input price: a write costs 1.25, a read 0.1.

Used by the benchmarks and the docs' figures; never by the runtime.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from maestro.brain.model_port import ModelRequest, Turn, approx_tokens, cacheable_breakpoints

__all__ = ["READ_PRICE", "WRITE_PRICE", "CacheUse", "PromptCache"]

WRITE_PRICE = 1.25
READ_PRICE = 0.1
TTL_SECONDS = 300.0


@dataclass(frozen=True)
class CacheUse:
    """One request's input tokens: sent uncached, written to the cache, read from it."""

    uncached: int
    written: int
    read: int

    @property
    def total(self) -> int:
        return self.uncached + self.written + self.read

    @property
    def cost(self) -> float:
        """In uncached-input-token equivalents."""
        return self.uncached + WRITE_PRICE * self.written + READ_PRICE * self.read


def _segments(request: ModelRequest) -> list[str]:
    """The prompt in cache order: tools, system, then one segment per turn."""
    tools = json.dumps(
        [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in request.tools
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return [tools, request.system, *(_turn_text(t) for t in request.turns)]


def _turn_text(turn: Turn) -> str:
    uses = [{"name": u.name, "input": u.input} for u in turn.tool_uses]
    results = [r.content for r in turn.tool_results]
    return turn.role + turn.text + json.dumps([uses, results], ensure_ascii=False)


@dataclass
class PromptCache:
    """One workspace's cache for one model (``minimum_tokens`` is the model's minimum)."""

    minimum_tokens: int
    _entries: dict[str, float] = field(default_factory=dict)  # prefix digest → expiry

    def send(
        self, requests: Sequence[ModelRequest], *, at: float = 0.0, together: bool = False
    ) -> list[CacheUse]:
        """The requests sent at second ``at``, one after another (each answered before the next
        is sent) or ``together`` (none reads what another of them writes)."""
        uses: list[CacheUse] = []
        pending: list[str] = []
        for request in requests:
            use, written = self._one(request, at)
            uses.append(use)
            if together:
                pending += written
            else:
                self._store(written, at)
        self._store(pending, at)
        return uses

    def _store(self, digests: list[str], at: float) -> None:
        for digest in digests:
            self._entries[digest] = at + TTL_SECONDS

    def _one(self, request: ModelRequest, at: float) -> tuple[CacheUse, list[str]]:
        segments = _segments(request)
        sizes = [approx_tokens(len(s)) for s in segments]
        ends = {"system": 2, "last_turn": len(segments)}  # segments up to the breakpoint
        marked = sorted(ends[p] for p in cacheable_breakpoints(request, self.minimum_tokens))
        digests = [_digest(segments[:n]) for n in range(len(segments) + 1)]
        live = {d for d, expiry in self._entries.items() if expiry > at}
        last = marked[-1] if marked else 0
        hit = max((n for n in range(2, last + 1) if digests[n] in live), default=0)
        for n in range(2, hit + 1):
            if digests[n] in live:
                self._entries[digests[n]] = at + TTL_SECONDS  # a read refreshes the entry
        written = [digests[n] for n in marked if n > hit]
        read = sum(sizes[:hit])
        write = sum(sizes[hit:last]) if written else 0
        return CacheUse(uncached=sum(sizes) - read - write, written=write, read=read), written


def _digest(segments: Sequence[str]) -> str:
    return hashlib.sha256("\x00".join(segments).encode()).hexdigest()
