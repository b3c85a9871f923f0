"""The reasoning brain: samples of an ordered action plan for a package."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # Named only in the Protocols' signatures: importing them here would load the memory window
    # and the decision records into every handler, the inbound webhook included.
    from maestro.domain.memory import BrainRequest
    from maestro.domain.records import BrainSample


class Brain(Protocol):
    """The reasoning brain: samples of an ordered action plan for a package, drawn one at a
    time (``maestro.brain.sample_drawing.draw`` decides how many)."""

    def describe(self) -> str:
        """What answered, named in every output (e.g. "offline brain (…no model)")."""

    def sample(self, request: BrainRequest, index: int) -> BrainSample: ...
