"""The errors the work order machine names in its Retry and Catch rules (by class name, as
Step Functions matches a Lambda's error); a test checks every custom name in the ASL is one."""

from __future__ import annotations

from maestro.errors import TransientError


class WorkOrderClosed(Exception):  # noqa: N818 - the error name the state machine catches
    """The WO is no longer open (cancelled or completed): nothing more is offered (I6)."""


WO_MACHINE_ERRORS: tuple[type[Exception], ...] = (WorkOrderClosed, TransientError)
"""Every exception class whose name the work order machine's ASL may match on."""
