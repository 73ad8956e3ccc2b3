"""GKE versions as the API writes them (`1.31.2-gke.1115000`), comparable; one parse for every check of
a version floor (the TPU catalogue's minimums, `cluster.minVersion`, ComputeClass and flex-start floors)."""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import BaseModel, ConfigDict

from tpu_stacks.errors import UserError


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GkeVersion(_Frozen):
    """A GKE version such as `1.31.2-gke.1115000`, comparable; a prefix like `1.33` is its lowest."""

    text: str

    @cached_property
    def key(self) -> tuple[int, int, int, int]:
        match = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+)(?:-gke\.(\d+))?)?", self.text.strip())
        if not match:
            raise UserError("", self.text, "is not a GKE version", "use a form like 1.31 or 1.31.2-gke.1115000")
        major, minor, patch, build = (int(part) if part else 0 for part in match.groups())
        return major, minor, patch, build

    def __lt__(self, other: GkeVersion) -> bool:
        return self.key < other.key

    @property
    def minor_alias(self) -> str:
        """`1.33` for `1.33.3-gke.1136000`: the version alias GKE resolves at create time to "the highest
        valid patch+gke.N patch in the 1.X version" (Cluster.initialClusterVersion, GKE API reference,
        https://cloud.google.com/kubernetes-engine/docs/reference/rest/v1/projects.locations.clusters#Cluster)."""
        major, minor, _, _ = self.key
        return f"{major}.{minor}"


def gke_version(text: str) -> GkeVersion:
    """Parse and check a GKE version string (raises UserError when it is not one)."""
    version = GkeVersion(text=text)
    _ = version.key
    return version


INFERENCE_GATEWAY_CRDS_FLOOR = "1.34.0-gke.1626000"
"""From this GKE version on, GKE installs the GA CRDs of the Gateway API and of the Gateway API Inference
Extension (`InferencePool`, `inference.networking.k8s.io/v1`) itself: "GKE automatically installs all GA CRDs for
Gateway API and Gateway API Inference Extension on GKE versions 1.34.0-gke.1626000 or later"
(https://llm-d.ai/docs/infrastructure/gateway/gke, following
https://cloud.google.com/kubernetes-engine/docs/how-to/deploy-gke-inference-gateway). A new cluster with
`vllm.gateway` is created at or above it (vllm/gateway_plan.py); below it the CRDs would have to be declared by
the stack, which it does not do. The alpha `InferenceObjective` CRD is not GA, so it is not among them."""
