"""The `raytrain` scenario: the Ray Train + MaxText tutorial (Llama 3 8B on a v6e 4x4) as one RayTrainStack."""

from __future__ import annotations

from typing import Any, cast

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.raytrain.args import RayTrainStackArgs
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.raytrain.sources import build_inputs_digest
from tpu_stacks.raytrain.spec import default_tag


def build(stack: LoadedStack, secrets: Secrets) -> None:
    section: dict[str, Any] = dict(stack.section or {})
    image = dict(section.get("image") or {})
    if image.get("build", "submit") != "prebuilt" and "tag" not in image:
        image["tag"] = f"{default_tag()}-{build_inputs_digest()}"
    section["image"] = image
    args = {**section, "cluster": stack.cluster}
    train = RayTrainStack("raytrain", cast(RayTrainStackArgs, args))
    pulumi.export("clusterName", train.cluster.cluster_name)
    pulumi.export("kubeconfig", train.cluster.kubeconfig)
    pulumi.export("slice", train.training_slice)
    pulumi.export("checkpointBucket", train.checkpoint_bucket)
    pulumi.export("checkpointPath", train.checkpoint_path)
    pulumi.export("image", train.image)
    pulumi.export("imageBuildCommand", train.image_build_command)
    pulumi.export("rayCluster", train.ray_cluster_name)
    pulumi.export("rayJob", train.ray_job_name)
    pulumi.export("dashboard", train.dashboard_port_forward)
    pulumi.export("jobSubmit", train.job_submit_command)
    pulumi.export("maxtextArgs", train.maxtext_args)
    pulumi.export("monitoring", train.monitoring)
