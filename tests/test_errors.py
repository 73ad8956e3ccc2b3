"""What a person sees of a bad value: never a secret, never 10,000 characters, never a look-alike."""

from __future__ import annotations

import pytest

from tpu_stacks.errors import UserError, redact, secret_key

HF = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7"
GOOGLE = "AIza" + "Sy" + "B" * 33


@pytest.mark.parametrize(
    "text",
    [HF, GOOGLE, f"--hf-token={HF}", "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----", "ghp_" + "x" * 36],
)
def test_secret_shapes_are_redacted(text):
    assert "<redacted>" in redact(text)
    assert text not in str(UserError("k", text, "is wrong", "fix"))


def test_values_under_secret_names_are_redacted_whatever_they_look_like():
    assert str(UserError("vllm.apiKey", "letmein", "is not a known setting")) == (
        "vllm.apiKey: <redacted> is not a known setting"
    )
    assert secret_key("db_password") and secret_key("hfToken") and secret_key("x.private-key")
    assert not secret_key("maxNumBatchedTokens") and not secret_key("ksaName") and not secret_key("monkey")


def test_long_values_are_cut_with_their_length():
    message = str(UserError("cluster.name", "c" * 10_000, "is too long"))
    assert "… (10000 characters) is too long" in message
    assert len(message) < 120


def test_look_alike_and_invisible_characters_are_escaped_and_named():
    message = str(UserError("zone", "us\u2011central1-b", "is not a zone"))
    assert message == "zone: 'us\\u2011central1-b' (contains U+2011 NON-BREAKING HYPHEN) is not a zone"
    assert "\\u200b" in str(UserError("k", "a\u200bb", "x"))
    assert str(UserError("k", "a\nb", "x")) == "k: 'a\\nb' x"


def test_a_missing_value_and_a_plain_one_read_as_before():
    assert str(UserError("scenario", "magic", "is not a scenario", "valid: vllm")) == (
        "scenario: 'magic' is not a scenario; valid: vllm"
    )


def test_an_output_is_shown_as_an_output_never_as_its_str():
    import pulumi

    output = pulumi.Output.secret("hf_not_shown")
    line = str(UserError("vllm.extra", output, "is not a known setting"))
    assert line == "vllm.extra: <an Output> is not a known setting"
    inside = str(UserError("vllm.labels", {"team": pulumi.Output.from_input("x")}, "is not accepted"))
    assert inside == "vllm.labels: {'team': <an Output>} is not accepted"
    assert "__str__" not in line + inside
    # a mapping under a secret's name is redacted whole, whatever it holds
    assert "hf_" not in str(UserError("vllm.hfToken", {"value": "hf_abcdefghijklmnop"}, "is not text"))


def test_any_value_under_a_secret_key_is_redacted_but_the_markers():
    from tpu_stacks.errors import show

    assert show(12345678901234, "vllmApiKey") == "<redacted>"  # a number is no less a secret
    assert show("<sneaky-password>", "dbPassword") == "<redacted>"  # nor text that starts with '<'
    assert show("<set>", "hfToken") == "'<set>'" and show("<plain text>", "hfToken") == "'<plain text>'"
    pair = __import__("collections").namedtuple("Pair", "a b")
    assert show(pair(1, 2), "x") == "[1, 2]"  # no TypeError on a namedtuple
