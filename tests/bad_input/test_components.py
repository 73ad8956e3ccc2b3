"""The same promise for a user who writes a Pulumi program: each workload component, given a bad name
that only its Workload Identity used to check, refuses it under RecordingMocks (tests/mocks.py) with
zero resources registered, and names the key in the component's own spelling."""

from __future__ import annotations

import pulumi
import pytest

from tests.bad_input.cases import shipped
from tests.mocks import refused
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.saxml.component import SaxmlStack
from tpu_stacks.vllm.component import VllmStack

COMPONENTS = {
    "vllm": (VllmStack, "dev"),
    "saxml": (SaxmlStack, "saxml"),
    "jetstream": (JetStreamStack, "jetstream-gemma"),
    "raytrain": (RayTrainStack, "raytrain"),
}


def args(section: str, stack: str, **changes):
    config = shipped(stack)
    cluster = {**config["tpu-stacks:cluster"], "project": "my-proj"}
    token = {"hf_token": pulumi.Output.secret("placeholder")} if section == "jetstream" else {}
    return {**config[f"tpu-stacks:{section}"], **changes, "cluster": cluster, **token}


CASES = [
    (section, key, value)
    for section in COMPONENTS
    for key, value in (("namespace", "Bad_NS"), ("ksaName", "Not A Name"), ("namespace", "v\u0430llm"))
] + [
    ("saxml", "gsaName", "sa"),
    ("jetstream", "gsaName", "UPPER-case"),
    ("saxml", "checkpointBuckets", ["goog-bucket"]),
    ("vllm", "extraArgs", ["--hf-token=abc"]),
    ("raytrain", "extraArgs", ["--api-key", "x"]),
]


@pytest.mark.parametrize("section,key,value", CASES, ids=[f"{s}-{k}-{i}" for i, (s, k, _) in enumerate(CASES)])
def test_a_bad_name_is_refused_with_nothing_registered(section, key, value):
    component, stack = COMPONENTS[section]
    message = refused(lambda: component("bad", args(section, stack, **{key: value})))  # asserts zero resources
    assert message.startswith(f"{section}.{key}"), message


@pytest.mark.parametrize("section", COMPONENTS)
def test_the_good_args_of_each_component_are_accepted(section):
    """The cases above differ from working args by one value: without it the same args plan."""
    from tests.mocks import capture

    component, stack = COMPONENTS[section]
    mocks = capture(lambda: component("good", args(section, stack)))
    assert mocks.resources
