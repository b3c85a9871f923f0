"""The demo world and the signed requests a phone would make, for the embedded stack."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from maestro.adapters.webhook_auth import app_signature, twilio_signature
from maestro.domain.models import Party, PartyRole, WorkOrder, WorkOrderStatus

LOCAL_HOST = "127.0.0.1:8787"
LOCAL_BASE_URL = f"http://{LOCAL_HOST}"

MARIA = Party(
    party_id="tenant-maria", role=PartyRole.TENANT, phone="+14155550100", name="Maria", unit="3B"
)
VIC = Party(
    party_id="vendor-vic", role=PartyRole.VENDOR, phone="+14155550142", name="Vic (plumber)"
)
PAULA = Party(
    party_id="pm-paula", role=PartyRole.PM, phone="+14155550199", name="Paula (on-call PM)"
)


def seed(stack: Any) -> None:
    """Maria in 3B, Vic the plumber, Paula the on-call PM, and WO-198 (the tap Vic fixed last
    week, with a rating request out: the trap leak-204's "2 onward" must not fall into)."""
    from maestro.adapters.dynamodb_memory import DynamoWorkOrderStore

    for party in (MARIA, VIC, PAULA):
        stack.parties.put(party)
    now: datetime = stack.clock.now()
    tap = WorkOrder(
        wo_id="WO-198",
        tenant_id=MARIA.party_id,
        vendor_id=VIC.party_id,
        unit="3B",
        summary="dripping bathroom tap",
        category="plumbing",
        status=WorkOrderStatus.COMPLETED,
        rating_requested=True,
        created_at=now - timedelta(days=9),
        updated_at=now - timedelta(days=2),
    )
    DynamoWorkOrderStore(stack.ddb, stack.tables["work_orders"]).create(tap)


def rest_event(
    path: str,
    body: str,
    headers: Mapping[str, str],
    *,
    host: str = LOCAL_HOST,
    scheme: str = "http",
) -> dict[str, Any]:
    """An API Gateway REST proxy event, as the loopback server hands requests over."""
    all_headers = {"Host": host, "X-Forwarded-Proto": scheme, **headers}
    return {
        "resource": path,
        "path": path,
        "httpMethod": "POST",
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": path,
            "httpMethod": "POST",
            "path": path,
            "stage": "local",
            "domainName": host,
            "requestId": "local",
            "accountId": "123456789012",
            "apiId": "local",
            "identity": {"sourceIp": "127.0.0.1"},
        },
        "body": body,
        "isBase64Encoded": False,
    }


def signed_sms_event(
    token: str,
    sid: str,
    sender: str,
    body: str,
    *,
    to: str = "+14155550000",
    base_url: str = LOCAL_BASE_URL,
) -> dict[str, Any]:
    params = {
        "MessageSid": sid,
        "AccountSid": "AClocal",
        "From": sender,
        "To": to,
        "Body": body,
        "NumMedia": "0",
    }
    signature = twilio_signature(token, f"{base_url}/twilio/sms", params)
    return rest_event(
        "/twilio/sms",
        urlencode(list(params.items())),
        {"X-Twilio-Signature": signature, "Content-Type": "application/x-www-form-urlencoded"},
    )


def signed_app_event(secret: str, path: str, body: str, at: datetime) -> dict[str, Any]:
    timestamp = str(int(at.timestamp()))
    return rest_event(
        path,
        body,
        {
            "X-Maestro-Timestamp": timestamp,
            "X-Maestro-Signature": app_signature(secret, timestamp, body),
            "Content-Type": "application/json",
        },
    )
