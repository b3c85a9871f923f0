"""Step Functions task: resolve open questions and holds (see maestro.pipeline.resolve)."""

from maestro.pipeline.entry import resolve as handler

__all__ = ["handler"]
