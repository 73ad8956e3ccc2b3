"""When is a container image reference pinned? One rule for the components and the policy pack.

A digest names exactly one image; a tag is accepted unless it moves (`latest`, `nightly`, a branch
name, or a variant of those such as `nightly-py312`); no tag at all pulls `:latest`.
"""

from __future__ import annotations

from tpu_stacks.errors import UserError

MOVING_TAGS: tuple[str, ...] = ("latest", "nightly", "master", "main", "edge", "dev")


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
