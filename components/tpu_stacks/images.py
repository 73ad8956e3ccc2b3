"""When is a container image reference pinned? One rule for the components and the policy pack.

A digest names exactly one image; a tag is accepted unless it moves (`latest`, `nightly`, a branch
name, or a variant of those such as `nightly-py312`); no tag at all pulls `:latest`.
"""

from __future__ import annotations

from tpu_stacks.errors import UserError

MOVING_TAGS: tuple[str, ...] = ("latest", "nightly", "master", "main", "edge", "dev")
PYTHON_IMAGE = "docker.io/library/python:3.12.8-slim-bookworm"
"""The image of our stdlib-only scripts (the Saxml publisher, the serving stacks' smoke test): any small
Python 3, pinned by its exact version (Debian's `nobody`, 65534, exists in it: k8s/security.py)."""


def image_problem(
    image: str, moving: tuple[str, ...] | list[str] = MOVING_TAGS, require_digest: bool = False
) -> str | None:
    """Why an image reference is not reproducible, or None when it is."""
    if "@" in image:
        return None
    last = image.rsplit("/", 1)[-1]
    if ":" not in last or not last.rsplit(":", 1)[1]:
        return "has no tag, so it pulls :latest"
    tag = last.rsplit(":", 1)[1].lower()
    if any(tag == m or tag.startswith(f"{m}-") or tag.endswith(f"-{m}") for m in moving):
        return f"uses the moving tag :{tag}"
    if require_digest:
        return "is pinned by tag only (tags can be re-pushed)"
    return None


def check_pinned(image: str, key: str, example: str) -> None:
    """Refuse an unpinned image reference with one line naming the key and a pinned example."""
    problem = image_problem(image)
    if problem:
        raise UserError(key, image, f"is not pinned: it {problem}", f"use an immutable tag or a digest, e.g. {example}")


# Digests. checkov (CKV_K8S_43) and `pinned-images` with `requireDigest` ask for `image@sha256:...`. A digest
# belongs in the catalogue only when upstream documents it next to the tag (a release note, a repo-info
# page): a digest read from a registry by us would be a fact without a source. Where no such page exists,
# the entry says so; a user can still pin one (every image setting accepts `repo@sha256:...`), and
# `imagePullPolicy: Always` (k8s.security) makes a re-pushed tag visible at the next pod start.
DIGEST_SOURCES: dict[str, str] = {
    "docker.io/vllm/vllm-tpu": "no digest published: the vLLM and tpu-inference release notes and docs name the "
    "version tag only (v0.29.0)",
    "us-docker.pkg.dev/cloud-tpu-images/inference": "no digest published: the Saxml and JetStream tutorials and "
    "the JetStream-PyTorch README name tags only ([K-SAX], [K-JETSTREAM])",
    "gcr.io/google.com/cloudsdktool/google-cloud-cli": "no digest published: the Cloud SDK release notes and the "
    "Docker image page (cloud.google.com/sdk/docs/downloads-docker) name version tags only",
    "gcr.io/gke-release/custom-metrics-stackdriver-adapter": "no digest published: k8s-stackdriver's manifest at "
    "0857364d names the tag ([ADAPTER])",
    "docker.io/library/python": "docker-library/repo-info lists each tag's digest, but only while the tag is "
    "supported: 3.12.8's page is gone, so there is no page to cite for it",
}
"""Per image repository (prefix): where its digest is documented upstream, or why none is pinned here."""


def digest_source(image: str) -> str | None:
    """The catalogue's note on `image`'s digest (by longest repository prefix), or None if not catalogued."""
    matches = [repo for repo in DIGEST_SOURCES if image.startswith(repo)]
    return DIGEST_SOURCES[max(matches, key=len)] if matches else None
