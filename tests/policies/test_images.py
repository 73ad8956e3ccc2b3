"""pinned-images (advisory): moving tags, untagged images, branch-following manifests, charts."""

import pulumi_kubernetes as k8s

from tests.policies import objects as o
from tests.policies.harness import capture, of, run

POLICY = "pinned-images"
ADAPTER = "https://raw.githubusercontent.com/GoogleCloudPlatform/k8s-stackdriver/{}/custom-metrics-stackdriver-adapter/deploy/production/adapter_new_resource_model.yaml"


def check(build, config=None):
    return of(run(capture(build), config), POLICY)


def with_image(image):
    return lambda: o.deployment("vllm", o.pod("tpu-v6e-slice", "2x4", 8, image=image))


def test_latest_nightly_and_untagged_images():
    (problem,) = check(with_image("vllm/vllm-tpu:latest"))
    assert problem.level == "advisory" and "image vllm/vllm-tpu:latest uses the moving tag :latest" in problem.message
    assert (
        len(
            check(
                lambda: o.raycluster(
                    "ray", o.pod("tpu-v6e-slice", "4x4", 4, image="rayproject/ray:nightly-py312-tpu"), 4
                )
            )
        )
        == 1
    )
    (problem,) = check(with_image("us-docker.pkg.dev/proj/repo/trainer"))
    assert "has no tag" in problem.message


def test_version_tags_and_digests_pass():
    assert check(with_image("vllm/vllm-tpu:v0.29.0")) == []
    assert check(with_image("localhost:5000/vllm@sha256:" + "a" * 64)) == []


def test_require_digest_setting():
    config = {POLICY: {"requireDigest": True}}
    (problem,) = check(with_image("vllm/vllm-tpu:v0.9.1"), config)
    assert "pinned by tag only" in problem.message


def test_add_on_manifest_from_master_and_unversioned_chart():
    (problem,) = check(lambda: k8s.yaml.v2.ConfigFile("adapter", file=ADAPTER.format("master")))
    assert "follows a branch" in problem.message
    assert check(lambda: k8s.yaml.v2.ConfigFile("adapter", file=ADAPTER.format("0857364d"))) == []
    assert (
        check(lambda: k8s.yaml.v2.ConfigFile("local", file="manifests/main/jobset.yaml")) == []
    )  # a file in this repo
    (problem,) = check(
        lambda: k8s.helm.v4.Chart(
            "kuberay", chart="kuberay-operator", repository_opts={"repo": "https://ray-project.github.io/kuberay-helm/"}
        )
    )
    assert "has no version" in problem.message
