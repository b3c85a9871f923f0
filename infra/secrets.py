"""The three secrets, in Secrets Manager. Functions get their *names* (ARNs) in settings and
read the values at run time through Powertools Parameters (cached): never in plain environment
variables, never in the template.

Each is created with a random placeholder value, so nothing works by accident before an operator
sets the real one (`aws secretsmanager put-secret-value`, docs/deploy.md): a Twilio signature
checked against a random token fails closed (403).
"""

from __future__ import annotations

from aws_cdk import aws_secretsmanager as secretsmanager
from cdk_nag import NagSuppressions
from constructs import Construct

from infra.config import EnvConfig


class Secrets(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: EnvConfig) -> None:
        super().__init__(scope, construct_id)
        self.twilio_auth_token = secretsmanager.Secret(
            self,
            "TwilioAuthToken",
            description="Twilio auth token: verifies X-Twilio-Signature (set the real value)",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True),
            removal_policy=config.removal,
        )
        self.app_signing_secret = secretsmanager.Secret(
            self,
            "AppSigningSecret",
            description="HMAC secret shared with the property app's backend and the assistant",
            generate_secret_string=secretsmanager.SecretStringGenerator(
                exclude_punctuation=True, password_length=64
            ),
            removal_policy=config.removal,
        )
        self.anthropic_api_key = secretsmanager.Secret(
            self,
            "AnthropicApiKey",
            description="Anthropic API key for the model brain (#5) (set the real value)",
            generate_secret_string=secretsmanager.SecretStringGenerator(exclude_punctuation=True),
            removal_policy=config.removal,
        )
        for secret, why in (
            (
                self.twilio_auth_token,
                "The Twilio auth token is issued and rotated in Twilio's console, not by a "
                "rotation Lambda; the operator puts the new value here when Twilio rotates it.",
            ),
            (
                self.app_signing_secret,
                "The app signing secret is shared with the property app's backend, which must "
                "change in step: it is rotated by hand with the app team, not on a schedule.",
            ),
            (
                self.anthropic_api_key,
                "The Anthropic API key is issued and revoked in Anthropic's console; Secrets "
                "Manager cannot rotate it. The operator replaces it here.",
            ),
        ):
            NagSuppressions.add_resource_suppressions(
                secret, [{"id": "AwsSolutions-SMG4", "reason": why}]
            )
