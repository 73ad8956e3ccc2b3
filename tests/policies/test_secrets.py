"""no-plaintext-secrets: tokens in env, args and ConfigMaps; Secret data marked secret."""

import pulumi
import pulumi_kubernetes as k8s

from tests.policies import objects as o
from tests.policies.harness import capture, of, run

POLICY = "no-plaintext-secrets"
HF_TOKEN = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF2g"  # shaped like a token, not one


def check(build, config=None):
    return of(run(capture(build), config), POLICY)


def vllm(env=None, args=None):
    extra = {k: v for k, v in (("env", env), ("args", args)) if v}
    return lambda: o.deployment("vllm", o.pod("tpu-v6e-slice", "2x4", 8, **extra))


def test_literal_hf_token_env():
    (problem,) = check(vllm(env=[{"name": "HF_TOKEN", "value": HF_TOKEN}]))
    assert problem.level == "mandatory"
    assert "container server: env HF_TOKEN holds a Hugging Face token" in problem.message
    assert "valueFrom.secretKeyRef" in problem.message
    assert HF_TOKEN not in problem.message  # the message never repeats the secret


def test_env_from_a_secret_passes():
    ref = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-secret", "key": "hf_api_token"}}}
    assert check(vllm(env=[ref, {"name": "VLLM_XLA_CACHE_PATH", "value": "/data"}])) == []


def test_secret_named_env_with_any_literal_and_its_allow_list():
    build = vllm(env=[{"name": "API_KEY", "value": "changeme"}])
    (problem,) = check(build)
    assert "env API_KEY is a literal value" in problem.message
    assert check(build, {POLICY: {"allowedEnvNames": ["API_KEY"]}}) == []


def test_even_a_pulumi_secret_is_plaintext_once_in_a_pod_spec():
    env = [{"name": "HUGGING_FACE_HUB_TOKEN", "value": pulumi.Output.secret(HF_TOKEN)}]
    assert len(check(vllm(env=env))) == 1


def test_token_on_the_command_line():
    (problem,) = check(vllm(args=["--model=google/gemma-7b", f"--hf-token={HF_TOKEN}"]))
    assert "args contains a Hugging Face token" in problem.message


def test_token_in_a_config_map():
    build = lambda: k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg"}, data={"token": HF_TOKEN, "model": "x"})  # noqa: E731
    (problem,) = check(build)
    assert "ConfigMap key token holds a Hugging Face token" in problem.message


def test_kubernetes_secret_data_is_marked_secret_by_the_sdk():
    build = lambda: k8s.core.v1.Secret("hf", metadata={"name": "hf-secret"}, string_data={"hf_api_token": HF_TOKEN})  # noqa: E731
    assert check(build) == []


def test_secret_declared_without_secret_marking():
    """A Secret registered without pulumi-kubernetes' Secret class, which marks data secret."""
    props = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "hf-secret"},
        "stringData": {"hf_api_token": HF_TOKEN},
    }
    build = lambda: pulumi.CustomResource("kubernetes:core/v1:Secret", "hf", props)  # noqa: E731
    (problem,) = check(build)
    assert "Secret stringData is not marked secret" in problem.message and "pulumi.Output.secret" in problem.message


def test_shapes_and_names_are_the_programs():
    """The pack reads tpu_stacks.secrets: a GitHub token of 24 characters and a service-account key file
    (both missed before, when the pack kept its own patterns), a name ending in _CREDENTIALS."""
    github = "ghp_" + "Zq7" * 8
    key_file = '{"type": "service_account", "private_key": "MIIEvQ"}'
    build = vllm(env=[{"name": "GH", "value": github}, {"name": "DB_CREDENTIALS", "value": "user:pw"}])
    messages = [p.message for p in check(build)]
    assert any("env GH holds a GitHub token" in m for m in messages)
    assert any("env DB_CREDENTIALS is a literal value" in m for m in messages)
    build = lambda: k8s.core.v1.ConfigMap("cfg", metadata={"name": "cfg"}, data={"sa.json": key_file})  # noqa: E731
    (problem,) = check(build)
    assert "ConfigMap key sa.json holds a service-account key" in problem.message


def test_names_that_merely_end_in_a_secret_word_and_the_default_allow_list_pass():
    env = [
        {"name": "MONKEY", "value": "banana"},  # matched `key$` before the rule needed a `_` boundary
        {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/var/secrets/google/key.json"},  # a path
        {"name": "DISK", "value": "hyperdisk-balanced-storage-pool-1"},
    ]
    assert check(vllm(env=env)) == []
    (problem,) = check(vllm(env=env), {POLICY: {"allowedEnvNames": []}})
    assert "env GOOGLE_APPLICATION_CREDENTIALS is a literal value" in problem.message
