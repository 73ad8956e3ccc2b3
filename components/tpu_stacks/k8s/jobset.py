"""The JobSet controller (kubernetes-sigs/jobset), installed from its pinned release manifest.

The tutorials run `kubectl apply --server-side -f .../releases/download/VERSION/manifests.yaml`.
Here the same manifest is a `yaml/v2` ConfigGroup: the Kubernetes provider fetches the release
URL at deploy time and applies every object with server-side apply (TpuCluster's provider enables
it; the JobSet CRD is too large for client-side apply's last-applied annotation). The group orders
the CRD and namespace first and awaits the controller's Deployment, so a resource that depends on
the group is created only once the JobSet webhook answers. The release tag pins the content; the
manifest is not vendored because it is upstream's artefact, verified by its tag (and offline
plans validate JobSets against the same release's CRD vendored in tools/preview/tpu_stacks_preview/crds).
"""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

RELEASES = "https://github.com/kubernetes-sigs/jobset/releases/download"
API_VERSION = "jobset.x-k8s.io/v1alpha2"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
"""One child Job per value of the named node label (one per node pool = per slice) [D-GKE-MSK]."""


def manifest_url(version: str) -> str:
    """The release manifest of one JobSet version, e.g. v0.12.0."""
    return f"{RELEASES}/{version}/manifests.yaml"


def install_jobset_controller(
    name: str, version: str, provider: pulumi.ProviderResource, parent: pulumi.Resource
) -> k8s.yaml.v2.ConfigGroup:
    """Declare the controller; depend on the returned group to wait for its webhook."""
    return k8s.yaml.v2.ConfigGroup(
        name,
        files=[manifest_url(version)],
        opts=pulumi.ResourceOptions(parent=parent, providers=[provider]),
    )
