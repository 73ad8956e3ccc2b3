"""The `vllm` scenario: the vLLM tutorial (Llama 3.1 70B on TPU v6e) as one VllmStack."""

from __future__ import annotations

from typing import cast

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.vllm.args import VllmStackArgs
from tpu_stacks.vllm.component import VllmStack


def build(stack: LoadedStack, secrets: Secrets) -> None:
    args = stack.component_args(hf_token=secrets.get("hfToken"), api_key_secret=secrets.get("vllmApiKey"))
    stack = VllmStack("vllm", cast(VllmStackArgs, args))
    pulumi.export("clusterName", stack.cluster.cluster_name)
    pulumi.export("kubeconfig", stack.cluster.kubeconfig)
    pulumi.export("serviceAddress", stack.service_address)
    pulumi.export("baseUrl", stack.base_url)
    pulumi.export("model", stack.model_id)
    pulumi.export("slice", stack.served_slice)
    pulumi.export("weightsBucket", stack.weights_bucket)
    pulumi.export("curl", stack.curl)
    pulumi.export("monitoring", stack.monitoring)
