"""Step Functions task: escalate at once, before the lease (see maestro.pipeline.escalate)."""

from maestro.pipeline.entry import escalate as handler

__all__ = ["handler"]
