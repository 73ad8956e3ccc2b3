"""inputs/validation.py's one-line refusals: the fix each pydantic error kind gets, the did-you-mean of a nested
section and of a key written in the wrong section, a required key winning a near tie, the component inputs in
either spelling, and how a value that is not plain data is shown.

The messages are the project's rule for user mistakes (docs/architecture.md: `KEY: VALUE problem; fix`, the
key as the user wrote it); the pydantic error kinds are pydantic's documented ones
(https://docs.pydantic.dev/latest/errors/validation_errors/)."""

from __future__ import annotations

from typing import Literal

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.field_rules import SpecModel
from tpu_stacks.inputs.validation import camel, cluster_of, component_inputs, parse, suggest
from tpu_stacks.vllm.spec import VllmSpec


class _Inner(SpecModel):
    sizer: int = 0
    version: str = ""
    replicas: int = 1


class _Outer(SpecModel):
    model: str
    mode: str = "fast"
    sizes: int = 0
    kind: Literal["a", "b"] = "a"
    name: str = ""
    min_version: str = ""
    count: int = 0
    inner: _Inner | None = None
    inners: list[_Inner] | None = None
    tags: list[str] | None = None


def refusal(data: object) -> str:
    with pytest.raises(UserError) as caught:
        parse(_Outer, data, "s")
    return str(caught.value)


def test_a_required_key_wins_a_near_tie():
    """`modle` is 0.8 like `model` and 0.89 like `mode` (difflib's ratio); the required `model` is meant."""
    assert suggest("modle", _Outer) == "model"
    assert refusal({"model": "m", "modle": "x"}) == "s.modle: 'x' is not a known setting; did you mean 'model'?"


def test_a_nested_sections_typo_is_matched_against_that_sections_keys():
    """`size` under `inner` is `sizer`, that section's key, though the whole tree's closest is `sizes` (a tie that
    difflib breaks towards the larger string)."""
    assert suggest("size", _Outer) == "sizes"
    assert suggest("size", _Outer, ("inner",)) == "sizer"
    assert suggest("size", _Outer, ("inners", 0)) == "sizer"
    assert refusal({"model": "m", "inner": {"size": 1}}).endswith("did you mean 'sizer'?")


def test_a_key_written_in_the_wrong_section_is_found_in_the_tree():
    """`replicsa` at the top level is close to no key there, but to `inner.replicas`."""
    assert suggest("replicsa", _Outer) == "replicas"
    assert refusal({"model": "m", "replicsa": 1}) == "s.replicsa: 1 is not a known setting; did you mean 'replicas'?"


def test_a_recursive_section_is_walked_once():
    class Node(SpecModel):
        label: str = ""
        child: Node | None = None

    Node.model_rebuild()
    assert suggest("lable", Node, ("child", "child")) == "label"
    assert suggest("lable", Node, ("nowhere",)) == "label"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({}, "s.model is required; add it"),
        ({"model": "m", "kind": "c"}, "s.kind: 'c' is not accepted; accepted: 'a' or 'b'"),
        ({"model": "m", "inner": "big"}, "s.inner: 'big' is not accepted; write it as a mapping of settings"),
        ({"model": "m", "tags": "x"}, "s.tags: 'x' is not accepted; write it as a list"),
        (
            {"model": "m", "name": 12},
            "s.name: 12 is not accepted; quote it in the stack file: YAML reads it as a number, and this setting is "
            "text",
        ),
        (
            {"model": "m", "min_version": 1.3},
            's.min_version: 1.3 is not accepted; quote it in the stack file ("1.30"): YAML reads an unquoted 1.30 as '
            "the number 1.3",
        ),
        (
            {"model": "m", "inner": {"version": 1.3}},
            's.inner.version: 1.3 is not accepted; quote it in the stack file ("1.30"): YAML reads an unquoted 1.30 '
            "as the number 1.3",
        ),
        # pydantic's own sentence, its first letter lowered after the `; `
        ({"model": "m", "name": True}, "s.name: True is not accepted; input should be a valid string"),
        (
            {"model": "m", "count": "many"},
            "s.count: 'many' is not accepted; input should be a valid integer, unable to parse string as an integer",
        ),
    ],
)
def test_each_error_kind_gets_its_fix(data, expected):
    assert refusal(data) == expected


@pytest.mark.parametrize(
    ("python", "stack_file"),
    [("model", "model"), ("hf_token", "hfToken"), ("api_key_secret", "apiKeySecret"), ("a_b", "aB")],
)
def test_camel_is_the_stack_files_spelling(python, stack_file):
    assert camel(python) == stack_file


def test_component_inputs_take_either_spelling_once():
    assert component_inputs(VllmSpec, {"model": "m", "hfToken": "t", "cluster": {"project": "p"}}) == {
        "model": "m",
        "hf_token": "t",
        "cluster": {"project": "p"},
    }
    assert component_inputs(VllmSpec, {"model": "m", "hf_token": "t"}) == {"model": "m", "hf_token": "t"}
    with pytest.raises(UserError, match=r"^hfToken is given twice, also as hf_token; give it once$"):
        component_inputs(VllmSpec, {"hfToken": "t", "hf_token": "t"})


class _Opaque:
    """Stands for what is not plain data: a pulumi Output, an object."""


@pytest.mark.parametrize(
    ("cluster", "shown"), [("prod", "'prod'"), (["p"], "['p']"), (None, "None"), (_Opaque(), "'_Opaque'")]
)
def test_a_cluster_that_is_not_a_mapping_is_shown_as_plain_data_or_its_type(cluster, shown):
    with pytest.raises(UserError) as caught:
        cluster_of({"cluster": cluster})
    assert str(caught.value).startswith(f"cluster: {shown} is not a mapping; ")


def test_args_that_are_not_a_mapping_are_refused_by_type():
    with pytest.raises(UserError, match=r"^args: '_Opaque' is not a mapping of the component's inputs"):
        component_inputs(VllmSpec, _Opaque())  # type: ignore[arg-type]
