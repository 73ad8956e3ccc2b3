"""The `vllm` scenario: the vLLM tutorial (Llama 3.1 70B on TPU v6e) as one VllmStack."""

from __future__ import annotations

from typing import Any

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks.vllm.spec import VllmSpec

SPEC = VllmSpec


def build(stack: LoadedStack, secrets: Secrets) -> None:
    args: dict[str, Any] = {
        "cluster": stack.config.cluster.model_dump(exclude_unset=True, exclude={"slices"}),
        **stack.section.model_dump(exclude_unset=True),
    }
    for key, arg in (("hfToken", "hf_token"), ("vllmApiKey", "api_key_secret")):
        value = secrets.get(key)
        if value is not None:
            args[arg] = value
    stack = VllmStack("vllm", args)  # type: ignore[arg-type]
    pulumi.export("clusterName", stack.cluster.cluster_name)
    pulumi.export("kubeconfig", stack.cluster.kubeconfig)
    pulumi.export("serviceAddress", stack.service_address)
    pulumi.export("baseUrl", stack.base_url)
    pulumi.export("model", stack.model_id)
    pulumi.export("slice", stack.served_slice)
    pulumi.export("weightsBucket", stack.weights_bucket)
    pulumi.export("curl", stack.curl)
