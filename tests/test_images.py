"""The pinned-image rule shared by the components and the policy pack."""

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.images import check_pinned, image_problem


@pytest.mark.parametrize(
    "image,problem",
    [
        ("docker.io/vllm/vllm-tpu:v0.29.0", None),
        ("us-docker.pkg.dev/p/r/img@sha256:" + "a" * 64, None),
        ("localhost:5000/img:v1.2", None),
        ("vllm/vllm-tpu:latest", "uses the moving tag :latest"),
        ("rayproject/ray:nightly-py312", "uses the moving tag :nightly-py312"),
        ("localhost:5000/img", "has no tag, so it pulls :latest"),
        ("busybox", "has no tag, so it pulls :latest"),
    ],
)
def test_image_problem(image, problem):
    assert image_problem(image) == problem


def test_digest_can_be_required():
    assert image_problem("img:v1", require_digest=True) == "is pinned by tag only (tags can be re-pushed)"


def test_check_pinned_names_the_key():
    with pytest.raises(
        UserError, match=r"vllm.image: 'img:latest' is not pinned: it uses the moving tag :latest; use an immutable tag"
    ):
        check_pinned("img:latest", "vllm.image", "img:v1")


def test_every_default_image_has_a_digest_note_in_the_catalogue():
    """A new pinned image must say where its digest is documented, or why none is pinned."""
    from tpu_stacks.images import digest_source
    from tpu_stacks.jetstream.spec import CONVERTER_IMAGE
    from tpu_stacks.k8s.compile_cache import CLOUD_SDK_IMAGE
    from tpu_stacks.k8s.metrics_adapter import IMAGE as ADAPTER_IMAGE
    from tpu_stacks.saxml.spec import ADMIN_IMAGE, HTTP_IMAGE, MODEL_IMAGE, PUBLISHER_IMAGE
    from tpu_stacks.vllm.spec import VLLM_IMAGE

    images = (CONVERTER_IMAGE, CLOUD_SDK_IMAGE, ADAPTER_IMAGE, ADMIN_IMAGE, HTTP_IMAGE, MODEL_IMAGE, PUBLISHER_IMAGE)
    for image in (*images, VLLM_IMAGE):
        assert digest_source(image), image
    assert digest_source("docker.io/someone/else:1") is None


def test_an_empty_tag_is_no_tag():
    """`repo:` names no tag; the runtime would pull `:latest` (or refuse the reference)."""
    assert image_problem("vllm/vllm-tpu:") == "has no tag, so it pulls :latest"


def test_the_tag_is_what_follows_the_last_colon_of_the_last_part():
    """A reference's tag follows the last ':' of its last '/'-separated part (a registry's host:port comes before the
    first '/'); a malformed reference with two is judged by its last, as a pull would fail on it anyway: never
    passed as pinned by the one before it."""
    assert image_problem("registry.example:5000/team/img:1.0:latest") == "uses the moving tag :latest"
    assert image_problem("registry.example:5000/team/img:1.0:") == "has no tag, so it pulls :latest"
    assert image_problem("registry.example:5000/team/img:1.0") is None
