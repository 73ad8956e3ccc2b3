"""The Ray head's ports, by KubeRay's container port names, at each pinned Ray.

`ray start --head`'s defaults: the GCS server, the dashboard (the job API and the Serve applications' status
KubeRay reads) and the Ray client server. Ray Train pins Ray 2.49.1 and multi-host vLLM Ray 2.60.0 (catalog/engines/),
so each reads its own version's rows of the ledger; the numbers agree today, and `make upstream` says so again when
a pin moves. The metrics and Serve ports are KubeRay's and Serve's, named where they are used.
"""

from __future__ import annotations

from tpu_stacks.catalog.upstream import number

TRAIN_HEAD_PORTS = {
    "gcs-server": number("ray-train.port.gcs"),
    "dashboard": number("ray-train.port.dashboard"),
    "client": number("ray-train.port.client"),
}
"""Ray Train's head (Ray 2.49.1), by KubeRay's port names (ledger: kuberay.port-name.dashboard)."""

SERVE_HEAD_PORTS = {
    "gcs-server": number("ray.port.gcs"),
    "dashboard": number("ray.port.dashboard"),
    "client": number("ray.port.client"),
}
"""Multi-host vLLM's RayService head (Ray 2.60.0), by the same names."""
