"""The errors the package pipeline's state machine names in its Retry and Catch rules.

Step Functions matches a Lambda error by the exception's class name, so each class here is part
of the contract with ``statemachines/package_pipeline.asl.json``; a test checks that every custom
name in the ASL is one of these. They live below the steps that raise them: the pipeline, the
lanes (an escalation's page worth a retry) and the work order machine (``maestro.dispatch.errors``
adds its own).
"""

from __future__ import annotations


class LeaseBusy(Exception):  # noqa: N818 - the error name the state machine retries on
    """Another package of this conversation holds the lease: wait and try again."""


class LeaseLost(Exception):  # noqa: N818 - the error name the state machine sees
    """This package held the lease but it expired and the next package took over; the package
    must not go on acting as if it still held it (it fails open)."""


class TransientError(Exception):
    """A failure worth retrying (the state machine retries it with backoff)."""


STATE_MACHINE_ERRORS: tuple[type[Exception], ...] = (LeaseBusy, LeaseLost, TransientError)
"""Every exception class whose name the ASL may match on."""
