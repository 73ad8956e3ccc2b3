"""Artifact Registry for workload images: the repository, the nodes' right to pull from it, the path.

The nodes pull images as the cluster's node service account, so that account (and no other) gets
`roles/artifactregistry.reader` on this repository alone. An existing cluster whose node account is
not known gets no grant: the docs say to grant it by hand. Repository ids are unique per project and
location, so the workloads' plans decide them per stack (`vllm.plan`, `raytrain.plan`: the user's id,
or a default scoped to the stack's cluster); this module declares what they decided.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from tpu_stacks.gcp.apis import REGISTRY_APIS, enable_apis

PULL_ROLE = "roles/artifactregistry.reader"


def docker_repository(
    name: str,
    args: gcp.artifactregistry.RepositoryArgs,
    nodes_account: pulumi.Input[str] | None,
    parent: pulumi.Resource,
    enable_api: bool = True,
) -> gcp.artifactregistry.Repository:
    """Declare the repository `{name}-registry` with the id in `args` (decided by the plan), readable by the
    nodes, after the Artifact Registry API (`enable_api`: Google Cloud's own universe; see gcp/apis.py)."""
    child = pulumi.ResourceOptions(parent=parent)
    api = enable_apis(name, str(args.project), REGISTRY_APIS, parent) if enable_api else []
    repository = gcp.artifactregistry.Repository(
        f"{name}-registry", args, opts=pulumi.ResourceOptions(parent=parent, depends_on=api)
    )
    if nodes_account is not None:
        gcp.artifactregistry.RepositoryIamMember(
            f"{name}-registry-nodes-pull",
            gcp.artifactregistry.RepositoryIamMemberArgs(
                project=args.project,
                location=args.location,
                repository=repository.repository_id,
                role=PULL_ROLE,
                member=pulumi.Output.from_input(nodes_account).apply(lambda email: f"serviceAccount:{email}"),
            ),
            opts=child,
        )
    return repository


def image_reference(
    region: str, project: str, repository: gcp.artifactregistry.Repository, path: str
) -> pulumi.Output[str]:
    """`REGION-docker.pkg.dev/PROJECT/REPOSITORY/PATH` (PATH is `name:tag` or a Docker Hub path)."""
    return pulumi.Output.concat(region, "-docker.pkg.dev/", project, "/", repository.repository_id, "/", path)
