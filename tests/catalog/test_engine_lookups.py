"""catalog/engines' lookups at the edges the catalogue's own images never reach: an image reference whose registry
has a port, a tag no record pins, an engine with several pinned versions."""

from packaging.version import Version

from tpu_stacks.catalog import engines
from tpu_stacks.catalog.engines import engine, engine_of_image, image_repository

JETSTREAM = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server"


def test_a_registry_port_is_not_a_tag():
    """The reference grammar (distribution/reference): the tag follows the last `:` of the last path component, so
    `localhost:5000/vllm/vllm-tpu` has no tag and `localhost:5000/vllm/vllm-tpu:v1` has `v1`."""
    assert image_repository("localhost:5000/vllm/vllm-tpu") == ("localhost:5000/vllm/vllm-tpu", "")
    assert image_repository("localhost:5000/vllm/vllm-tpu:v1@sha256:" + "0" * 64) == (
        "localhost:5000/vllm/vllm-tpu",
        "v1",
    )


def test_an_image_of_an_unpinned_tag_is_the_newest_version_and_a_pinned_tag_its_own():
    versions = [e for e in engines.engines() if e.engine == "jetstream"]
    assert [e.version for e in versions] == ["v0.2.3", "v0.2.4"]
    assert engine_of_image(f"{JETSTREAM}:v9.9.9") is versions[-1]
    assert engine_of_image(f"{JETSTREAM}:v0.2.3") is versions[0]


def test_an_engine_is_its_newest_pinned_version():
    """JetStream and Ray each pin two versions (the newest last); their numbers say which is newer."""
    for name in ("jetstream", "ray"):
        pinned = [e.version for e in engines.engines() if e.engine == name]
        assert len(pinned) == 2
        assert engine(name).version == max(pinned, key=lambda v: Version(v.removeprefix("v")))
