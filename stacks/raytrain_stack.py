"""The `raytrain` scenario: the Ray Train + MaxText tutorial (Llama 3 8B on a v6e 4x4) as one RayTrainStack."""

from __future__ import annotations

from typing import Any

import pulumi

from stacks.config import LoadedStack, Secrets
from tpu_stacks.raytrain.component import RayTrainStack
from tpu_stacks.raytrain.sources import build_inputs_digest
from tpu_stacks.raytrain.spec import RayTrainSpec, default_tag

SPEC = RayTrainSpec


def build(stack: LoadedStack, secrets: Secrets) -> None:
    section: dict[str, Any] = stack.section.model_dump(exclude_unset=True)
    image = dict(section.get("image") or {})
    if image.get("build", "submit") != "prebuilt" and "tag" not in image:
        image["tag"] = f"{default_tag()}-{build_inputs_digest()}"
    section["image"] = image
    args = {"cluster": stack.config.cluster.model_dump(exclude_unset=True, exclude={"slices"}), **section}
    train = RayTrainStack("raytrain", args)  # type: ignore[arg-type]
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
