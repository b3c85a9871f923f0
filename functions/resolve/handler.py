"""Step Functions task: resolve open questions and holds (see maestro.pipeline.steps)."""

from maestro.pipeline.entry import resolve as handler

__all__ = ["handler"]
