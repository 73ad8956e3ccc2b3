"""The `jetstream` scenario: the JetStream PyTorch tutorial (Gemma 7B-it or Llama 3 8B on TPU v5e)
as one JetStreamStack."""

from __future__ import annotations

from typing import cast

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.jetstream.args import JetStreamStackArgs
from tpu_stacks.jetstream.component import JetStreamStack


def build(stack: LoadedStack, secrets: Secrets) -> None:
    args = stack.component_args(hf_token=secrets.get("hfToken"))
    jetstream = JetStreamStack("jetstream", cast(JetStreamStackArgs, args))
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
    pulumi.export("monitoring", jetstream.monitoring)
