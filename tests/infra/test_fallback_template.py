"""The fallback route in the synthesized templates (#17): Twilio's SMS fallback URL is a second
API whose one method sends the signed request to the fallback queue (API Gateway → SQS, no
Lambda), drained by a function of the inbound route's own; the stranded sweep's schedule; the
output `maestro twilio wire` reads. And the mapping template, rendered as API Gateway would
render it for a signed request, gives the drain exactly that request back."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, quote_plus

from infra_synth import Synth

from infra.fallback import fallback_request_template
from maestro.adapters.webhook_auth import twilio_signature
from maestro.ingest.fallback import FALLBACK_ATTRIBUTES, FALLBACK_ROUTE, FallbackRequest
from maestro.ingest.webhooks import EMPTY_TWIML, FORM
from maestro.ports.workflows import StrandedSweep
from maestro.stack_outputs import OUTPUT_SMS_FALLBACK_URL


def _fallback_api(synth: Synth, env: str) -> str:
    (api,) = [
        lid
        for lid, api in synth.resources(env, "AWS::ApiGateway::RestApi").items()
        if api["Properties"]["Name"] == f"maestro-{env}-fallback"
    ]
    return api


def test_the_fallback_route_sends_the_request_to_the_fallback_queue(synth: Synth, env: str) -> None:
    api = _fallback_api(synth, env)
    methods = [
        m["Properties"]
        for m in synth.resources(env, "AWS::ApiGateway::Method").values()
        if m["Properties"]["RestApiId"] == {"Ref": api}
    ]
    (method,) = methods  # one route: Twilio has a fallback URL for incoming SMS alone
    resources = synth.resources(env, "AWS::ApiGateway::Resource")
    assert resources[method["ResourceId"]["Ref"]]["Properties"]["PathPart"] == "sms"
    assert method["HttpMethod"] == "POST"
    assert method["RequestParameters"] == {"method.request.header.X-Twilio-Signature": True}
    integration = method["Integration"]
    assert integration["Type"] == "AWS"  # a service integration: no Lambda in between
    assert "sqs:path/" in json.dumps(integration["Uri"])
    assert integration["PassthroughBehavior"] == "NEVER"  # a body of another type: 415
    assert set(integration["RequestTemplates"]) == {FORM}
    ok = next(r for r in integration["IntegrationResponses"] if r["StatusCode"] == "200")
    assert ok["ResponseTemplates"]["text/xml"] == EMPTY_TWIML
    # Its role may send to the fallback queue, and do nothing else.
    role = integration["Credentials"]["Fn::GetAtt"][0]
    statements = [
        statement
        for policy in synth.resources(env, "AWS::IAM::Policy").values()
        if {"Ref": role} in policy["Properties"]["Roles"]
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    (statement,) = statements
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Resource"]["Fn::GetAtt"][0].startswith("QueuesInboundFallback")


def test_the_drain_takes_the_fallback_queue_with_partial_failures(synth: Synth, env: str) -> None:
    functions = synth.resources(env, "AWS::Lambda::Function")
    (drain,) = [
        lid
        for lid, fn in functions.items()
        if fn["Properties"]["FunctionName"] == f"maestro-{env}-inbound-fallback"
    ]
    (mapping,) = [
        m["Properties"]
        for m in synth.resources(env, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"]["FunctionName"] == {"Ref": drain}
    ]
    assert mapping["EventSourceArn"]["Fn::GetAtt"][0].startswith("QueuesInboundFallback")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    handler = functions[drain]["Properties"]
    assert handler["Handler"] == "handler.handler"


def test_the_fallback_url_is_an_output(synth: Synth, env: str) -> None:
    output = synth.templates[env]["Outputs"][OUTPUT_SMS_FALLBACK_URL]["Value"]
    rendered = json.dumps(output)
    assert _fallback_api(synth, env) in rendered
    assert rendered.endswith('twilio/sms"]]}')


def test_the_stranded_sweep_runs_every_five_minutes_on_the_debounce_queue(
    synth: Synth, env: str
) -> None:
    (rule,) = [
        r["Properties"]
        for r in synth.resources(env, "AWS::Events::Rule").values()
        if r["Properties"].get("ScheduleExpression")
        and r["Properties"]["Targets"][0]["Arn"]["Fn::GetAtt"][0].startswith("QueuesDebounce")
    ]
    assert rule["ScheduleExpression"] == "rate(5 minutes)"
    (target,) = rule["Targets"]
    assert json.loads(target["Input"]) == StrandedSweep().model_dump(mode="json")


# -- the mapping template, rendered ---------------------------------------------------------------


def _render(template: str, body: str, headers: dict[str, str], context: dict[str, str]) -> str:
    """What API Gateway's mapping template gives for a request, for the constructs this one
    uses: ``$util.urlEncode(...)`` of ``$input.body``, ``$input.params('<header>')`` and
    ``$context.<name>``; ``$context.<name>`` alone; ``#if(<header> != "")…#end``."""

    def value(expression: str) -> str:
        if expression == "$input.body":
            return body
        if match := re.fullmatch(r"\$input\.params\('([^']+)'\)", expression):
            return headers.get(match[1], "")
        if match := re.fullmatch(r"\$context\.(\w+)", expression):
            return context[match[1]]
        raise AssertionError(f"a construct the renderer does not know: {expression}")

    def conditional(match: re.Match[str]) -> str:
        return match[2] if value(match[1]) != "" else ""

    rendered = re.sub(r'#if\((\$[^ ]+) != ""\)(.*?)#end', conditional, template)
    rendered = re.sub(
        r"\$util\.urlEncode\((\$[^()]+(?:\('[^']*'\))?)\)",
        lambda m: quote_plus(value(m[1])),
        rendered,
    )
    return re.sub(r"\$context\.(\w+)", lambda m: context[m[1]], rendered)


def _send_message(rendered: str) -> tuple[str, dict[str, Any]]:
    """SQS's reading of a SendMessage in the query protocol: the body, and the message
    attributes in the shape Lambda's SQS event gives them."""
    params = dict(parse_qsl(rendered, keep_blank_values=True))
    assert params["Action"] == "SendMessage"
    attributes: dict[str, Any] = {}
    n = 1
    while f"MessageAttribute.{n}.Name" in params:
        assert params[f"MessageAttribute.{n}.Value.DataType"] == "String"
        value = params[f"MessageAttribute.{n}.Value.StringValue"]
        assert value, "SQS refuses an empty attribute value"
        attributes[params[f"MessageAttribute.{n}.Name"]] = {"stringValue": value}
        n += 1
    assert len(params) == 2 + 3 * (n - 1), "a parameter SendMessage would not read"
    return params["MessageBody"], attributes


def test_the_mapping_template_gives_the_drain_the_request_twilio_signed() -> None:
    url = "https://def456.execute-api.us-east-1.amazonaws.com/v1/twilio/sms"
    form = {
        "MessageSid": "SM" + "5" * 32,
        "From": "+14155550100",
        "Body": "agua en el piso & en la cocina = 100% mojado",
        "ErrorCode": "11200",
    }
    body = "&".join(f"{k}={quote_plus(v)}" for k, v in form.items())
    signature = twilio_signature("the auth token", url, form)
    context = {
        "domainName": "def456.execute-api.us-east-1.amazonaws.com",
        "path": "/v1" + FALLBACK_ROUTE,
        "requestId": "c0ffee",
        "requestTimeEpoch": "1796083200123",
    }
    for settings in ("", "key=webhooks_sharedkey_x,algorithm=HMAC_SHA256"):
        headers = {"X-Twilio-Signature": signature, "Content-Type": FORM}
        if settings:
            headers["X-Twilio-Webhooks-Signature-Settings"] = settings
        template = fallback_request_template()
        sent_body, attributes = _send_message(_render(template, body, headers, context))
        request = FallbackRequest.from_sqs(sent_body, attributes)
        assert request.body == body
        assert request.signature == signature
        assert request.signature_settings == (settings or None)
        event = request.rest_event()
        assert event["requestContext"]["path"] == context["path"]
        assert event["headers"]["Host"] == context["domainName"]
        assert request.received_at.timestamp() == 1796083200.123
        assert set(attributes) == {
            name
            for field, name in FALLBACK_ATTRIBUTES.items()
            if field != "signature_settings" or settings
        }
