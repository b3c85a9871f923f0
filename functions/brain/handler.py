"""Step Functions task: brain (see maestro.pipeline.brain)."""

from maestro.pipeline.entry import brain as handler

__all__ = ["handler"]
