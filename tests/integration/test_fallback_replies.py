"""When the brain falls back (#20, item 5) on the embedded stack, through a signed SMS: the
model is down, so every sample fails. Before, the PM got "[INFO] fallback." with no reason
and the sender heard nothing at all. Its own stack (a model that is down), so its own file.
"""

from __future__ import annotations

import pytest
from embedded import new_executions, pages, sms, to_phone

from maestro.brain.model_port import ModelError, ModelRequest
from maestro.domain.directory import Person, PersonRole
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import housed, seed, seed_directory
from maestro_dev.scripted import Scripted, ScriptedModel

pytestmark = pytest.mark.integration


def _down(_request: ModelRequest) -> Scripted:
    return ModelError("overloaded", "529")


def test_model_down_the_sender_hears_a_person_will_follow_up_and_the_page_says_why() -> None:
    with LocalStack(model=ScriptedModel(responder=_down)) as down:
        seed(down)
        phone = "+14155557307"
        seed_directory(
            down,
            housed(
                Person(
                    person_id="tenant-theo",
                    role=PersonRole.TENANT,
                    phones=(phone,),
                    name="Theo",
                    unit_id="6G",
                )
            ),
        )
        words = "the dryer vent flap outside is hanging loose and banging all night"
        sms(down, words, sender=phone)
        new_executions(down, down.idle + 1)
        (told,) = to_phone(down, phone)
        assert "follow up" in told
        (page,) = [p for p in pages(down) if phone in p]
        assert "could not be reached" in page  # the failure kind, in words
        assert "5 of 5" in page
        assert "dryer vent flap" in page  # what they wrote
        assert "nothing was changed" in page  # what was done
        assert "told a person will follow up" in page
