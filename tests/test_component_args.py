"""The Python API's component args: what is not a mapping, or no cluster, is one line naming it."""

from __future__ import annotations

import pulumi
import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import cluster_of, component_inputs
from tpu_stacks.vllm.spec import VllmSpec


@pytest.mark.parametrize("args", [None, ["model"], "model"])
def test_args_that_are_not_a_mapping_are_refused_in_one_line(args):
    with pytest.raises(UserError) as refused:
        component_inputs(VllmSpec, args)
    assert str(refused.value).startswith("args: ") and "not a mapping" in str(refused.value)


def test_a_missing_cluster_is_required():
    with pytest.raises(UserError, match=r"^cluster is required|^cluster: .* is required"):
        cluster_of({"model": "x"})


@pytest.mark.parametrize("cluster", ["my-cluster", None, pulumi.Output.from_input({"project": "p"})])
def test_a_cluster_that_is_not_plain_data_is_refused_without_showing_an_output(cluster):
    with pytest.raises(UserError) as refused:
        cluster_of({"cluster": cluster})
    message = str(refused.value)
    assert message.startswith("cluster: ") and "is not a mapping" in message and "\n" not in message
    assert "__str__" not in message


def test_a_plain_cluster_is_handed_over_as_a_dict():
    assert cluster_of({"cluster": {"project": "p"}}) == {"project": "p"}
