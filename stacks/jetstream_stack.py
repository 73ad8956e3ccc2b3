"""The `jetstream` scenario: the JetStream PyTorch tutorial (Gemma 7B-it or Llama 3 8B on TPU v5e)
as one JetStreamStack."""

from __future__ import annotations

from typing import Any

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.jetstream.spec import JetStreamSpec

SPEC = JetStreamSpec


def build(stack: LoadedStack, secrets: Secrets) -> None:
    args: dict[str, Any] = {
        "cluster": stack.config.cluster.model_dump(exclude_unset=True, exclude={"slices"}),
        **stack.section.model_dump(exclude_unset=True),
    }
    token = secrets.get("hfToken")
    if token is not None:
        args["hf_token"] = token
    jetstream = JetStreamStack("jetstream", args)  # type: ignore[arg-type]
    pulumi.export("clusterName", jetstream.cluster.cluster_name)
    pulumi.export("kubeconfig", jetstream.cluster.kubeconfig)
    pulumi.export("serviceName", jetstream.service_name)
    pulumi.export("portForward", jetstream.port_forward)
    pulumi.export("curl", jetstream.curl)
    pulumi.export("checkpointPath", jetstream.checkpoint_path)
    pulumi.export("checkpointBucket", jetstream.checkpoint_bucket)
    pulumi.export("converterJob", jetstream.converter_job)
    pulumi.export("model", jetstream.model_id)
    pulumi.export("slice", jetstream.served_slice)
