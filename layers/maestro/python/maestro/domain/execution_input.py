"""What an execution of the package pipeline starts with: the package inline when it fits, and
always where its messages are in the conversation buffer (``PackageRef``).

The flusher (``maestro.ingest``, through the Step Functions adapter) writes it and every step of
``maestro.pipeline`` reads it back (``maestro.pipeline.contract.ExecutionState`` grows from it),
so it lives below both.
"""

from __future__ import annotations

from pydantic import Field

from maestro.domain.common import E164, AwareDatetime, Frozen
from maestro.domain.models import FlushTrigger, Message, Package

MAX_INLINE_PACKAGE_BYTES = 32 * 1024
"""Above this the execution carries only the package's buffer keys and each step reads the
messages back. Every state's input and output must stay under Step Functions' 256 KiB, and the
state carries the package next to the lease snapshot, the samples, the queue and the effects."""


class PackageRef(Frozen):
    """Where a package's messages are in the conversation buffer: seqs (after_seq, through_seq]
    of one conversation. Small, so it always travels with the execution."""

    package_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    flush_number: int = Field(ge=1)
    after_seq: int = Field(ge=0)
    through_seq: int = Field(ge=1)
    trigger: FlushTrigger
    sender_phone: E164
    flushed_at: AwareDatetime

    @classmethod
    def of(cls, package: Package) -> PackageRef:
        return cls(
            package_id=package.package_id,
            conversation_id=package.conversation_id,
            flush_number=package.flush_number,
            after_seq=package.messages[0].seq - 1,
            through_seq=package.messages[-1].seq,
            trigger=package.trigger,
            sender_phone=package.sender_phone,
            flushed_at=package.flushed_at,
        )

    def package(self, messages: list[Message]) -> Package:
        """The package again, from the messages read back from the buffer."""
        expected = self.through_seq - self.after_seq
        if len(messages) != expected or any(
            m.seq != self.after_seq + i + 1 for i, m in enumerate(messages)
        ):
            raise ValueError(
                f"{self.package_id}: expected seqs {self.after_seq + 1}..{self.through_seq}"
            )
        return Package(
            package_id=self.package_id,
            conversation_id=self.conversation_id,
            flush_number=self.flush_number,
            trigger=self.trigger,
            sender_phone=self.sender_phone,
            messages=tuple(messages),
            flushed_at=self.flushed_at,
        )


class ExecutionInput(Frozen):
    """What the flusher starts an execution with (its name is the package id)."""

    package_id: str = Field(min_length=1)
    conversation_id: str = Field(min_length=1)
    flush_number: int = Field(ge=1)
    step: bool = Field(default=False, description="Pause at every step gate")
    package: Package | None = Field(default=None, description="Inline when it fits")
    package_ref: PackageRef


def execution_input(package: Package, *, step: bool = False) -> str:
    """The execution input for ``package``: inline when small enough, by reference otherwise."""
    inline = len(package.model_dump_json().encode()) <= MAX_INLINE_PACKAGE_BYTES
    return ExecutionInput(
        package_id=package.package_id,
        conversation_id=package.conversation_id,
        flush_number=package.flush_number,
        step=step,
        package=package if inline else None,
        package_ref=PackageRef.of(package),
    ).model_dump_json()
