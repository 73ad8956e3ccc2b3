"""What a secret looks like, and which names hold one: the one rule for the program and the policy pack.

The program redacts these shapes from every error line (`errors.UserError`) and refuses them in a
plain setting (`field_rules`); the policy pack (`no-plaintext-secrets`) refuses them in literal env
values, command lines and ConfigMaps. Both read this module, so a token the program hides is a token
the pack finds, and the other way round.

Each shape starts at a word boundary (`\\b`): without it `sk-` matched inside `hyperdisk-balanced-...`
and `--task-...`, and a disk type in an error line came out as `hyperdi<redacted>`. The lengths are
the smallest that real tokens of the kind have, less a margin, so a token is caught even when a user
pastes one cut short: Hugging Face user access tokens are `hf_` and 34 letters and digits; classic
GitHub tokens `ghp_` (or `gho_`, `ghu_`, `ghs_`, `ghr_`) and 36, fine-grained ones `github_pat_` and
82 (https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/);
Google API keys `AIza` and 35 (https://cloud.google.com/docs/authentication/api-keys); AWS access key
ids `AKIA` and 16 upper-case letters and digits
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html).

Pure: no provider SDK (the policy pack imports it).
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"

SHAPES: dict[str, re.Pattern[str]] = {
    "Hugging Face token": re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    "GitHub token": re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    "Google API key": re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    "Google OAuth token": re.compile(r"\bya29\.[0-9A-Za-z_\-.]{10,}"),
    "AWS access key": re.compile(r"\bAKIA[0-9A-Z]{16}"),
    "API key": re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    "private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL),
    "service-account key": re.compile(r"\"private_key\"\s*:\s*\"[^\"]*\""),  # a key file pasted whole
}
"""Shapes of secrets a careless user pastes into a stack file, a flag, an env value or a ConfigMap."""

SECRET_NAME = r"(?i)(^|_)(token|secret|password|passwd|credentials?|key)$"
"""Names whose values are secrets whatever they look like: `HF_TOKEN`, `API_KEY`, `db_password`, and
config keys once camelCase and dashes are read as `_` (`hfToken`, `private-key`). The `_` boundary
keeps `MONKEY` and `max_num_batched_tokens` out. The pack's default `secretEnvNamePattern`."""


def secret_kind(text: object) -> str | None:
    """What kind of secret a string contains (`Hugging Face token`), if any part of it looks like one."""
    if not isinstance(text, str):
        return None
    return next((kind for kind, pattern in SHAPES.items() if pattern.search(text)), None)


def redact(text: str) -> str:
    """`text` with everything shaped like a secret replaced by <redacted>."""
    for pattern in SHAPES.values():
        text = pattern.sub(REDACTED, text)
    return text


def is_secret_name(name: str, pattern: str = SECRET_NAME) -> bool:
    """An env var name (`HF_TOKEN`) or config key part (`hfToken`) named like a secret: `pattern` (the
    pack's configurable one, SECRET_NAME by default) searched in the name with camelCase and dashes
    read as `_` (an UPPER_SNAKE env name stays as it is)."""
    snake = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).replace("-", "_")
    return bool(snake) and re.search(pattern, snake) is not None


def secret_key(key: str) -> bool:
    """A config key whose last part is named like a secret (`vllm.extra.hfToken`, `tpu-stacks:dbPassword`)."""
    last = re.split(r"[.:\[\]]", key.strip("]"))[-1] if key else ""
    return is_secret_name(last)
