"""The field rules every spec shares: Kubernetes quantities, Cloud Storage bucket names, image names,
and the plain-value checks (booleans as numbers, absurd numbers, secrets, non-ASCII)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.field_rules import FieldProblem, SpecModel, check_plain_values, described_fields
from tpu_stacks.inputs.k8s_quantity import check_quantity
from tpu_stacks.names import check_bucket_name, check_image_name


@pytest.mark.parametrize("good", ["8", "500m", "64Gi", "1.5", "2e3", "128Mi", ".5", "1k", "+4"])
def test_kubernetes_quantities_are_accepted(good):
    assert check_quantity(good) == good


@pytest.mark.parametrize("bad", ["lots", "64GB", "64 Gi", "16GiB", "-2", "0", "0.0Gi", "Gi", "8\u200b", ""])
def test_other_quantities_are_refused(bad):
    with pytest.raises(UserError):
        check_quantity(bad)


@pytest.mark.parametrize(
    "good", ["weights", "my-bucket_1", "a.b.c", "abc", "b" * 63, ".".join(["p" * 63, "q" * 63, "r" * 63])]
)
def test_bucket_names_google_accepts(good):
    assert check_bucket_name(good) == good


@pytest.mark.parametrize(
    "bad,why",
    [
        ("goog-x", "starts with 'goog'"),
        ("my-google-data", "contains 'google'"),
        ("g00gle-data", "contains 'google'"),
        ("my-g0ogle", "contains 'google'"),
        ("mygoogie", "contains 'google'"),
        ("ab", "not 3-63"),
        ("b" * 64, "not 3-63"),
        ("Upper", "is not a bucket name"),
        ("-dash", "is not a bucket name"),
        ("192.168.5.4", "IP address"),
        ("a..b", "dot-separated part"),
        ("a.-b", "dot-separated part"),
        ("gs://x", "is a URL"),
    ],
)
def test_bucket_names_google_refuses(bad, why):
    with pytest.raises(UserError) as error:
        check_bucket_name(bad, "saxml.checkpointBuckets[0]")
    assert why in str(error.value)


@pytest.mark.parametrize("good", ["vllm-tpu:v0.9.2", "team/ray-maxtext", "a__b.c:TAG_1", "x"])
def test_image_names_are_accepted(good):
    assert check_image_name(good) == good


@pytest.mark.parametrize("bad", ["VLLM:v1", "vllm tpu:v1", "a//b", "-x", "x:", "x:" + "t" * 129, "x:-t"])
def test_other_image_names_are_refused(bad):
    with pytest.raises(UserError):
        check_image_name(bad)


@pytest.mark.parametrize(
    "value,accepts,problem",
    [
        (True, {int}, "is a boolean"),
        (float("inf"), {float}, "not a finite number"),
        (10**12, {int}, "beyond any sensible value"),
        ("on", {bool}, "is text, not true or false"),
        ("hf_" + "x" * 34, {str}, "looks like a secret"),
        ("v\u0430llm", {str}, "not ASCII"),
        (["ok", "-1e99"], {list}, None),
    ],
)
def test_plain_value_checks(value, accepts, problem):
    if problem is None:
        check_plain_values(value, accepts)
        return
    with pytest.raises(FieldProblem) as error:
        check_plain_values(value, accepts)
    assert problem in error.value.problem


def test_a_problem_inside_a_list_names_its_index():
    with pytest.raises(FieldProblem) as error:
        check_plain_values(["ok", {"k": True, "t": "x\u200b"}], {list})
    assert error.value.where == "[1].t"


def test_checking_a_bucket_name_loads_no_provider_sdk():
    """The bucket rule lived in gcp/storage.py, so parsing a spec with a bucket field loaded pulumi_gcp."""
    import subprocess
    import sys

    code = (
        "import sys; from tpu_stacks.saxml.spec import SaxmlSpec; from tpu_stacks.inputs.validation import parse; "
        "parse(SaxmlSpec, {'checkpointBuckets': ['my-weights']}, 'saxml'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp', 'pulumi_kubernetes')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


# -- descriptions: the fields' docstrings, read when asked (described_fields) ------------------------------------


class _DocumentedBase(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    size: int = 3
    """How big."""
    colour: str = "red"
    _shade = "dark"  # a private attribute: an Assign, its string is no field's docstring
    """Not the colour's."""
    kept: int = Field(default=1, description="Stated in Field.")
    """Field's description wins."""
    later: int = 0
    """Redeclared below without a docstring."""


class _DocumentedChild(_DocumentedBase):
    later: int = 1  # no docstring here: pydantic leaves it undescribed

    class Nested:
        inner: int = 0
        """Inside a nested class: no field's."""

    extra: bool = False
    """Only the child's."""


class _SpecBase(SpecModel):
    size: int = 3
    """How big."""
    colour: str = "red"
    _shade = "dark"  # a private attribute: an Assign, its string is no field's docstring
    """Not the colour's."""
    kept: int = Field(default=1, description="Stated in Field.")
    """Field's description wins."""
    later: int = 0
    """Redeclared below without a docstring."""


class _SpecChild(_SpecBase):
    later: int = 1  # no docstring here: pydantic leaves it undescribed

    class Nested:
        inner: int = 0
        """Inside a nested class: no field's."""

    extra: bool = False
    """Only the child's."""


def test_described_fields_are_what_pydantics_attribute_docstrings_give():
    """The same bodies, one read by pydantic when the class is made, one by `described_fields` when asked."""
    for documented, spec in ((_DocumentedBase, _SpecBase), (_DocumentedChild, _SpecChild)):
        want = {name: field.description for name, field in documented.model_fields.items()}
        assert {name: field.description for name, field in described_fields(spec).items()} == want
    assert described_fields(_SpecChild)["size"].description == "How big."  # inherited
    assert described_fields(_SpecChild)["later"].description is None
    assert described_fields(_SpecChild)["colour"].description is None
    assert described_fields(_SpecChild)["kept"].description == "Stated in Field."


def test_specs_carry_no_descriptions_until_asked():
    """Made without reading their source (a plan never needs the text); the fields themselves stay unchanged."""
    assert _SpecBase.model_fields["size"].description is None
    assert described_fields(_SpecBase)["size"] is not _SpecBase.model_fields["size"]
    assert _SpecBase.model_fields["size"].description is None
