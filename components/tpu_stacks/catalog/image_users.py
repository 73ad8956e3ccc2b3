"""Who each pinned image runs as, with the source of that fact: pure data, read by `k8s/security.harden`.

The serving and training engines' users are on their engine records (catalog/engines/, `EngineVersion.user`);
the helper images the stacks also run (the Cloud SDK, a small Python, the converter, the metrics adapter) are
here. Where an image's Dockerfile sets no USER (root by default), the entry is the numeric user we run it
as and why that works; k8s/security.py says what such a user needs (HOME, LOGNAME, emptyDirs). Pure: no
provider SDK, so the engine catalogue, the policy pack and the decision layer may import it.
"""

from __future__ import annotations

from dataclasses import dataclass

NONROOT_UID = 65532
"""The user we run images that set no USER as: distroless's `nonroot` (65532), above 10000 so it
matches no user of the node; files the process needs are on emptyDirs it owns through fsGroup."""


@dataclass(frozen=True)
class ImageUser:
    """Who a pinned image runs as, and the source of that fact."""

    uid: int
    source: str
    home: str | None = None
    """A HOME the image owns (kept, not replaced by an emptyDir); None: HOME is an emptyDir at `HOME`."""
    login: str | None = None
    """The name of `uid` in the image's /etc/passwd; None: it has none, so USER and LOGNAME name it."""


CLOUD_SDK = ImageUser(
    NONROOT_UID,
    "google-cloud-cli images set no USER; gcloud writes only its config directory, moved to /tmp "
    "(CLOUDSDK_CONFIG, cloud.google.com/sdk/docs/configurations)",
)
JETSTREAM_CONVERTER = ImageUser(
    NONROOT_UID,
    "the inference-checkpoint image sets no USER; the converter writes /base, /pt-ckpt, /tmp, the "
    "jetstream-pytorch clone and HOME (gcloud's config, the Hugging Face cache, the packages its script "
    "pip-installs as a user), all on its scratch volume, made writable by fsGroup [I: not run here]",
)
PYTHON = ImageUser(
    65534, "the publisher needs no writable path; nobody (65534) exists in Debian images", login="nobody"
)
METRICS_ADAPTER = ImageUser(
    NONROOT_UID,
    "distroless, no USER; it only needs a port (6443 here, not 443, so no NET_BIND_SERVICE) and its "
    "self-signed certificate directory (--cert-dir on /tmp)",
    login="nonroot",  # distroless's /etc/passwd has nonroot (65532)
)
HELPER_IMAGE_USERS: dict[str, ImageUser] = {
    "cloud-sdk": CLOUD_SDK,
    "jetstream-converter": JETSTREAM_CONVERTER,
    "python": PYTHON,
    "metrics-adapter": METRICS_ADAPTER,
}
"""The helper images by family (the engines' users are on their records)."""
