"""The plain-value checks as a spec applies them to each annotation shape (`int`, `int | None`, `Optional[int]`,
`Annotated`, `Literal`, `list[int]`, `dict[str, int]`, a nested section), the boundaries of the checks, and the
shared field types (`K8sName`, `Quantity`, `EngineArgs`...) keeping the value they accept.

These pin inputs/field_rules.py where its own tests called `check_plain_values` with a hand-made set of types: what
`SpecModel` derives from a field's annotation, and what each shared type returns, no test read."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, Field

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.field_rules import (
    LARGEST_NUMBER,
    LARGEST_REPLICAS,
    BucketName,
    EngineArgs,
    FieldProblem,
    ImageName,
    K8sName,
    Quantity,
    ServiceAccountId,
    SpecModel,
    check_plain_values,
    described_fields,
)
from tpu_stacks.inputs.validation import parse
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.vllm.spec import VllmSpec


class _Inner(SpecModel):
    size: int = 0


class _Shapes(SpecModel):
    count: int = 0
    ratio: float = 0.5
    maybe: int | None = None
    old_style: Optional[int] = None  # noqa: UP045 - typing.Union, not types.UnionType: both are unions
    sized: Annotated[int, Field(ge=0)] = 0
    maybe_sized: Annotated[int, Field(ge=0)] | None = None  # pydantic keeps an Annotated inside a union
    level: Literal[1, 2] = 1
    counts: list[int] | None = None
    sizes: dict[str, int] = Field(default_factory=dict)
    words: list[str] = Field(default_factory=list)
    anything: Any = None
    inner: _Inner | None = None


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(UserError) as caught:
        parse(_Shapes, data, "s")
    return str(caught.value)


@pytest.mark.parametrize("key", ["count", "ratio", "maybe", "old_style", "sized", "maybe_sized", "level"])
def test_a_boolean_is_no_number_whatever_the_annotation(key):
    """YAML reads `yes`/`true` as a boolean; a number field refuses it by name, through `| None`, `Optional`,
    `Annotated` and a `Literal` of numbers alike."""
    assert refusal({key: True}).startswith(f"s.{key}: True is a boolean, not a number")


@pytest.mark.parametrize(
    ("data", "key"),
    [({"counts": [1, True]}, "s.counts[1]"), ({"sizes": {"a": 1, "b": True}}, "s.sizes.b")],
)
def test_a_boolean_item_of_a_list_or_mapping_of_numbers_is_refused(data, key):
    assert refusal(data).startswith(f"{key}: True is a boolean, not a number")


def test_text_inside_a_list_or_a_value_of_any_type_is_checked():
    assert refusal({"words": ["ok", "v\u0430llm"]}).startswith("s.words[1]: ")
    assert "has a character that is not ASCII" in refusal({"words": ["ok", "v\u0430llm"]})
    assert "has a character that is not ASCII" in refusal({"anything": ["v\u0430llm"]})


def test_a_nested_section_checks_its_own_keys():
    """A section's mapping is left to the section's own model, so a key it does not know is that, an unknown
    setting, and not a plain-value complaint about the key's characters."""
    assert "is not a known setting" in refusal({"inner": {"s\u0131ze": 1}})
    assert parse(_Shapes, {"inner": {"size": 3}}, "s").inner == _Inner(size=3)


def test_ascii_ends_at_127():
    """ASCII is the code points 0-127 (DEL is 127); 128 is the first that is not."""
    check_plain_values("a\x7f", {str})
    with pytest.raises(FieldProblem, match="not ASCII"):
        check_plain_values("a\x80", {str})


def test_the_largest_sensible_number_is_a_billion():
    assert LARGEST_NUMBER == 10**9
    check_plain_values(10**9, {int})
    check_plain_values(-(10**9), {int})
    with pytest.raises(FieldProblem, match=r"more than 1,000,000,000"):
        check_plain_values(10**9 + 1, {int})


def test_a_problem_two_levels_down_shows_the_bad_item_itself():
    with pytest.raises(FieldProblem) as caught:
        check_plain_values({"a": [1, "v\u0430llm"]}, {dict})
    assert (caught.value.where, caught.value.value) == (".a[1]", "v\u0430llm")


class _Names(SpecModel):
    namespace: K8sName = "default"
    account: ServiceAccountId = "my-account"
    memory: Quantity = "1Gi"
    bucket: BucketName = "weights"
    image: ImageName = "vllm-tpu:v1"
    args: EngineArgs = Field(default_factory=list)


def test_the_shared_types_keep_the_value_they_accept():
    given = {
        "namespace": "serving",
        "account": "serving-sa",
        "memory": "64Gi",
        "bucket": "my-weights",
        "image": "team/vllm-tpu:v0.9.2",
        "args": ["--max-num-seqs=8", "--served-model-name", "api-key"],  # a flag's value named like a secret is fine
    }
    assert parse(_Names, given).model_dump() == given


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("namespace", "Serving", "is not a valid Kubernetes name"),
        ("account", "sa", "is not a valid service account id"),
        ("memory", "64GB", ""),
        ("bucket", "goog-weights", "starts with 'goog'"),
        ("image", "Team/Vllm", "is not an image name"),
    ],
)
def test_the_shared_types_refuse_what_their_api_refuses(key, value, problem):
    with pytest.raises(UserError) as caught:
        parse(_Names, {key: value}, "s")
    assert str(caught.value).startswith(f"s.{key}: {value!r} {problem}")


@pytest.mark.parametrize(
    ("args", "where", "flag"),
    [
        (["--max-num-seqs=8", "--hf-token=hf_x"], "[1]", "--hf-token"),
        (["--api-key", "abc"], "[0]", "--api-key"),
    ],
)
def test_a_secret_flag_is_refused_in_either_form(args, where, flag):
    """`--flag=value` and `--flag value` are the two forms argparse reads (vLLM's, SGLang's flags)."""
    with pytest.raises(UserError) as caught:
        parse(_Names, {"args": args}, "s")
    assert str(caught.value).startswith(f"s.args{where}: ") and f"passes a secret flag ({flag})" in str(caught.value)


def test_a_serving_stack_declares_at_most_64_replicas():
    """docs/vllm.md: a target that needs more than 64 replicas is refused (split it over stacks)."""
    assert LARGEST_REPLICAS == 64
    assert JetStreamSpec.model_validate({"model": "llama-3.1-8b", "replicas": 64}).replicas == 64
    with pytest.raises(UserError, match=r"^jetstream\.replicas: 65 "):
        parse(JetStreamSpec, {"model": "llama-3.1-8b", "replicas": 65}, "jetstream")
    assert parse(VllmSpec, {"model": "llama-3.1-8b", "replicas": {"max": 64}}, "vllm").replicas.max == 64
    with pytest.raises(UserError, match=r"^vllm\.replicas\.max: 65 "):
        parse(VllmSpec, {"model": "llama-3.1-8b", "replicas": {"max": 65}}, "vllm")


class _PlainBase(BaseModel):
    inherited: int = 0
    """Declared in a plain pydantic model."""


class _OnPlainBase(SpecModel, _PlainBase):
    own: int = 0
    """Declared in the spec."""


def test_a_field_declared_in_a_plain_pydantic_base_is_described_from_that_class():
    fields = described_fields(_OnPlainBase)
    assert (fields["inherited"].description, fields["own"].description) == (
        "Declared in a plain pydantic model.",
        "Declared in the spec.",
    )


def _defined_twice() -> type[SpecModel]:
    class Twice(SpecModel):
        size: int = 0
        """The first definition's."""

    class Twice(SpecModel):  # noqa: F811 - the name is bound to this one, the class returned
        size: int = 0
        """The last definition's."""

    return Twice


def test_a_class_defined_twice_is_described_from_the_definition_its_name_holds():
    assert described_fields(_defined_twice())["size"].description == "The last definition's."
