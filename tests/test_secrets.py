"""One rule for what a secret looks like and which names hold one (tpu_stacks.secrets): the program's
error lines and the policy pack's no-plaintext-secrets read the same shapes and names."""

from __future__ import annotations

import pytest

from tpu_stacks.errors import UserError, looks_secret
from tpu_stacks.secrets import SECRET_NAME, is_secret_name, redact, secret_key, secret_kind

# Shaped like tokens of each kind, none of them a real one.
SAMPLES = {
    "Hugging Face token": "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7",
    "GitHub token": "ghp_" + "x1" * 18,
    "Google API key": "AIza" + "Sy" + "B" * 33,
    "Google OAuth token": "ya29." + "a0Ab-cd.ef_" * 3,
    "AWS access key": "AKIA" + "IOSFODNN7EXAMPLE",
    "API key": "sk-" + "proj-" + "q" * 20,
    "private key": "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----",
    "service-account key": '{"type": "service_account", "private_key": "MIIEvQ"}',
}


@pytest.mark.parametrize("kind", SAMPLES)
def test_each_shape_is_named_and_redacted_in_any_context(kind):
    text = f"--flag={SAMPLES[kind]} rest"
    assert secret_kind(text) == kind
    assert "<redacted>" in redact(text) and SAMPLES[kind] not in redact(text)
    assert looks_secret(text)
    assert SAMPLES[kind] not in str(UserError("k", text, "is wrong"))


@pytest.mark.parametrize(
    "text",
    [
        "hyperdisk-balanced-storage-pool-1",  # `sk-` inside a word: was redacted to `hyperdi<redacted>`
        "--task-name-for-the-long-running-job",
        "google/gemma-7b-it",
        "us-central1-b",
        "hf_short",
        "ghp_tooshort",
        "max_num_batched_tokens",
    ],
)
def test_ordinary_values_are_not_secrets(text):
    assert secret_kind(text) is None
    assert redact(text) == text
    assert str(UserError("k", text, "is wrong")) == f"k: {text!r} is wrong"


def test_lengths_are_the_lower_of_the_two_former_thresholds():
    """The pack required 30 characters after ghp_, 35 after AIza and 20 after sk-; the program 20, 20
    and 16. One rule, the lower (a token cut short is still a token): these were missed by the pack."""
    assert secret_kind("ghp_" + "a" * 20) == "GitHub token"
    assert secret_kind("AIza" + "b" * 20) == "Google API key"
    assert secret_kind("sk-" + "c" * 16) == "API key"
    assert secret_kind("ghp_" + "a" * 19) is None and secret_kind("sk-" + "c" * 15) is None


@pytest.mark.parametrize(
    "name", ["HF_TOKEN", "API_KEY", "db_password", "hfToken", "x.private-key", "CLIENT_SECRET", "DB_CREDENTIALS"]
)
def test_secret_names(name):
    assert is_secret_name(name.rsplit(".", 1)[-1])
    assert secret_key(f"vllm.extra.{name}")


@pytest.mark.parametrize("name", ["MONKEY", "max_num_batched_tokens", "ksaName", "TOKENIZER", "KEYS", "PASSKEYS"])
def test_names_that_only_contain_a_secret_word_are_not_secret_names(name):
    assert not is_secret_name(name) and not secret_key(name)


def test_a_custom_pattern_is_searched_in_the_same_snake_case_form():
    assert is_secret_name("SESSION_COOKIE", r"(?i)cookie$")
    assert is_secret_name("sessionCookie", r"(?i)_cookie$")
    assert not is_secret_name("SESSION_COOKIE", SECRET_NAME)
