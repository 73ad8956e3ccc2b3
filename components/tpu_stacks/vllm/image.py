"""The vLLM server's image: the pinned upstream image as it is, or through Artifact Registry (a remote repository
that mirrors Docker Hub, or a standard one the multi-host Ray Serve image is pushed to), which the nodes may read.
"""

from collections.abc import Sequence
from typing import Optional

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.gcp.image_build import submitted_build
from tpu_stacks.gcp.registry import docker_repository, image_reference
from tpu_stacks.vllm.plan import VllmPlan


def server_image(
    plan: VllmPlan,
    project: str,
    region: str,
    parent: pulumi.Resource,
    nodes_account: Optional[pulumi.Input[str]],
    storage_api: Sequence[pulumi.Resource] = (),
) -> tuple[pulumi.Input[str], Optional[pulumi.Output[str]]]:
    """The upstream pinned image, or the same image through Artifact Registry (which the nodes may read); and, for
    the multi-host Ray Serve image the stack runs from its own registry, the command that builds it, as the stack's
    builder account (gcp/image_build.submitted_build, SGLang-JAX's builder too); None when nothing is built."""
    registry = plan.spec.registry
    if registry.mode == "none":
        return plan.spec.image, None
    remote = registry.mode == "remote"
    repository = docker_repository(
        parent._name,
        gcp.artifactregistry.RepositoryArgs(
            repository_id=registry.repository,
            project=project,
            location=region,
            format="DOCKER",
            mode="REMOTE_REPOSITORY" if remote else "STANDARD_REPOSITORY",
            description="vLLM images for tpu-stacks",
            remote_repository_config=gcp.artifactregistry.RepositoryRemoteRepositoryConfigArgs(
                description="Docker Hub",
                docker_repository=gcp.artifactregistry.RepositoryRemoteRepositoryConfigDockerRepositoryArgs(
                    public_repository="DOCKER_HUB"
                ),
            )
            if remote
            else None,
        ),
        nodes_account,
        parent,
        enable_api=plan.cluster.universe.is_default,
    )
    path = plan.spec.image.removeprefix("docker.io/") if remote else registry.image
    image = image_reference(region, project, repository, path or "")
    if not plan.builds_image:
        return image, None
    build = submitted_build(
        parent._name,
        project,
        region,
        repository,
        image,
        plan.builder_account,
        "Builds the multi-host vLLM Ray Serve image",
        parent,
        plan.build_command,
        enable_api=plan.cluster.universe.is_default,
        storage_api=storage_api,
    )
    return image, build
