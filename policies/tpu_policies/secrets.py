"""Rule 8: no plaintext secrets in workloads, config maps or unmarked Secret data.

The tutorials put the Hugging Face token in an env var literal or a command line
(vllm production-stack#14, lws#234): anyone who can read the Deployment, its logs or the
Pulumi state then has the token. Tokens belong in a Kubernetes Secret, referenced with
`valueFrom.secretKeyRef`, whose data Pulumi stores encrypted (marked secret).
"""

from __future__ import annotations

import re
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
)

from tpu_policies.values import as_dict, as_list, config, plain
from tpu_policies.workloads import is_kubernetes, kind_of, pod_templates

SECRET_NAME = r"(?i)(token|key|secret|password|passwd)$"
TOKEN_PATTERNS: dict[str, re.Pattern[str]] = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
    "Google OAuth token": re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    "API key": re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
}
SECRET_KINDS = ("data", "stringData")


def token_kind(text: Any) -> str | None:
    """What kind of credential a string contains, if it looks like one."""
    if not isinstance(text, str):
        return None
    return next((kind for kind, pattern in TOKEN_PATTERNS.items() if pattern.search(text)), None)


def _env_problems(where: str, container: dict[str, Any], name_pattern: re.Pattern[str], allowed: set[str]) -> list[str]:
    problems = []
    cname = container.get("name") or "?"
    for env in as_list(container.get("env")):
        name, value = env.get("name") if isinstance(env, dict) else None, as_dict(env).get("value")
        if not isinstance(value, str) or not value or name in allowed:
            continue
        kind = token_kind(value)
        if kind or (isinstance(name, str) and name_pattern.search(name)):
            what = f"holds a {kind}" if kind else "is a literal value"
            problems.append(
                f"{where} container {cname}: env {name} {what}; put it in a Kubernetes Secret and use "
                "env.valueFrom.secretKeyRef (from a Pulumi config secret), never a literal value"
            )
    for key in ("command", "args"):
        for part in as_list(container.get(key)):
            if kind := token_kind(part):
                problems.append(
                    f"{where} container {cname}: {key} contains a {kind}; read it from a Secret-backed env "
                    "var or a mounted Secret file instead of the command line"
                )
                break
    return problems


def check(resource_type: str, props: dict[str, Any], secret_outputs: list[str], args: Any) -> list[str]:
    """Every plaintext credential in one Kubernetes object."""
    if not is_kubernetes(resource_type):
        return []
    kind = kind_of(resource_type, props)
    problems: list[str] = []
    if kind == "Secret":
        for field in SECRET_KINDS:
            if as_dict(props.get(field)) and field not in secret_outputs:
                problems.append(
                    f"Secret {field} is not marked secret, so it is stored in plaintext in the Pulumi state; "
                    "wrap the values with pulumi.Output.secret (or read them with config.require_secret) "
                    f'or set additional_secret_outputs=["{field}"]'
                )
        return problems
    if kind == "ConfigMap":
        for key, value in {**as_dict(props.get("data")), **as_dict(props.get("binaryData"))}.items():
            if found := token_kind(value):
                problems.append(f"ConfigMap key {key} holds a {found}; move it to a Kubernetes Secret")
        return problems
    name_pattern = re.compile(config(args, "secretEnvNamePattern", SECRET_NAME))
    allowed = set(config(args, "allowedEnvNames", []))
    for template in pod_templates(resource_type, props):
        for container in template.containers():
            problems += _env_problems(template.where, container, name_pattern, allowed)
    return problems


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    secret_outputs = list(getattr(args.opts, "additional_secret_outputs", None) or [])
    for problem in check(args.resource_type, plain(args.props), secret_outputs, args):
        report_violation(problem, None)


POLICY = ResourceValidationPolicy(
    name="no-plaintext-secrets",
    description="No credential in plaintext: no token-looking or secret-named literal env values or command-line "
    "tokens in pods, no tokens in ConfigMaps, and Secret data marked secret.",
    validate=_validate,
    enforcement_level=EnforcementLevel.MANDATORY,
    severity=Severity.CRITICAL,
    config_schema=PolicyConfigSchema(
        properties={
            "secretEnvNamePattern": {
                "type": "string",
                "default": SECRET_NAME,
                "description": "Regular expression: env vars whose name matches must not have a literal value.",
            },
            "allowedEnvNames": {
                "type": "array",
                "items": {"type": "string"},
                "default": [],
                "description": "Env var names that match the pattern but hold no secret (e.g. CACHE_KEY).",
            },
        }
    ),
)
