"""Stack config mistakes: each gives one line naming the key, the value and the fix, exit code 2,
no traceback, from `tpu-stacks plan`'s own `main` (in this process: tests/cli_run.py; one case also as the
console script's process, the way users run it)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli_run import tpu_stacks
from tests.clients import CLIENTS
from tpu_stacks.catalog.tpu import generation_names

ROOT = Path(__file__).resolve().parents[2]
PLAN = str(Path(sys.executable).parent / "tpu-stacks")
BASE = {"gcp:project": "my-proj", "gcp:region": "us-central1"}
CLUSTER = {"name": "c", "location": "us-central1-b"}


def plan(project: Path, stack: str, config: dict, secure: dict | None = None) -> subprocess.CompletedProcess:
    merged = {**BASE, **config, **{k: {"secure": "v1:abc"} for k in (secure or {})}}
    document = {"config": {key: value for key, value in merged.items() if value is not None}}  # None: unset
    (project / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
    return tpu_stacks("plan", "--cwd", project, "--stack", stack)


CASES = [
    (
        "topology",
        {"tpu-stacks:cluster": {**CLUSTER, "slices": [{"generation": "v5e", "topology": "4x9"}]}},
        "tpu-stacks:cluster.slices[0].topology: '4x9' is not a v5e topology; valid: 1x1, 2x2, 2x4, 4x4",
    ),
    (
        "typo",
        {"tpu-stacks:cluster": {**CLUSTER, "slices": [{"generation": "v5e", "topologie": "4x8"}]}},
        "tpu-stacks:cluster.slices[0].topologie: '4x8' is not a known setting; did you mean 'topology'?",
    ),
    (
        "generation",
        {"tpu-stacks:cluster": {**CLUSTER, "slices": [{"generation": "v9", "topology": "2x2"}]}},
        # The valid names are the catalogue's (catalog/tpu.py), not a list typed here.
        "tpu-stacks:cluster.slices[0].generation: 'v9' is not a TPU generation on GKE; valid: "
        + ", ".join(generation_names()),
    ),
    (
        "scenario",
        {"tpu-stacks:scenario": "magic", "tpu-stacks:cluster": CLUSTER},
        "tpu-stacks:scenario: 'magic' is not a scenario; valid: cluster, jetstream, raytrain, saxml, sglang, vllm",
    ),
    (
        "nocluster",
        {"tpu-stacks:scenario": "cluster"},
        # Pulumi.yaml declares the key without a default: the CLI (and the offline loader) require it.
        "Pulumi.nocluster.yaml tpu-stacks:cluster: '(unset)' is required by Pulumi.yaml for stack 'nocluster'; "
        "write tpu-stacks:cluster: as a mapping in Pulumi.nocluster.yaml",
    ),
    (
        "clusterscalar",
        {"tpu-stacks:scenario": "cluster", "tpu-stacks:cluster": "my-cluster"},
        "Pulumi.clusterscalar.yaml line 4 tpu-stacks:cluster: 'my-cluster' is not of type object as Pulumi.yaml declares",
    ),
    (
        "location",
        {"tpu-stacks:cluster": {"name": "c", "location": "mars-1"}},
        "tpu-stacks:cluster.location: 'mars-1' is neither a zone nor a region",
    ),
    (
        "flexspot",
        {
            "tpu-stacks:cluster": {
                **CLUSTER,
                "slices": [{"generation": "v6e", "topology": "4x4", "flexStart": True, "spot": True}],
            }
        },
        "tpu-stacks:cluster.slices[0].flexStart: True cannot be combined with spot",
    ),
    (
        "identity",
        {"tpu-stacks:cluster": CLUSTER, "tpu-stacks:identity": {"namespace": "Bad_NS"}},
        "tpu-stacks:identity.namespace: 'Bad_NS' is not a valid Kubernetes name",
    ),
    (
        "unknownkey",
        {"tpu-stacks:cluster": CLUSTER, "tpu-stacks:hftoken": "x"},
        "tpu-stacks:hftoken: '<set>' is not a tpu-stacks setting; did you mean tpu-stacks:hfToken?",
    ),
    (
        "notamapping",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "Qwen/Qwen2.5-1.5B-Instruct", "replicas": "two"},
        },
        "tpu-stacks:vllm.replicas: 'two' is not accepted; write it as a mapping of settings",
    ),
    (
        "novllm",
        {"tpu-stacks:scenario": "vllm", "tpu-stacks:cluster": CLUSTER},
        "tpu-stacks:vllm is required for scenario vllm",
    ),
    (
        "slices",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": {**CLUSTER, "slices": [{"generation": "v6e", "topology": "2x4"}]},
            "tpu-stacks:vllm": {"model": "Qwen/Qwen2.5-1.5B-Instruct", "sourceRanges": CLIENTS},
        },
        "tpu-stacks:cluster.slices: '1 slice(s)' are derived from vllm.model; remove cluster.slices",
    ),
    (
        "model",
        {"tpu-stacks:scenario": "vllm", "tpu-stacks:cluster": CLUSTER, "tpu-stacks:vllm": {"model": "acme/nope"}},
        "tpu-stacks:vllm.model: 'acme/nope' is not in the model catalogue",
    ),
    (
        "gated",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-70B", "sourceRanges": CLIENTS},
        },
        "tpu-stacks:hfToken is required: meta-llama/Llama-3.1-70B is gated on Hugging Face; "
        "set it as a secret: pulumi config set --secret tpu-stacks:hfToken <value>",
    ),
    (
        "tokeninsection",  # the secret written inside the section: say how a secret is set, not just "remove it"
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-70B", "hfToken": "hf_abc"},
        },
        "tpu-stacks:vllm.hfToken: '<set>' is not a known setting; a secret is not a section setting: "
        "set it with pulumi config set --secret tpu-stacks:hfToken",
    ),
    (
        "plaintoken",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:hfToken": "hf_abc",
            "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-70B"},
        },
        "tpu-stacks:hfToken: '<plain text>' is not a secret in the stack file",
    ),
    (
        "fit",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-70B", "topology": "2x2"},
        },
        "tpu-stacks:vllm.topology: '2x2' cannot hold meta-llama/Llama-3.1-70B",
    ),
    (
        # the same without a token: the fit is still what is reported (a missing token must not hide it)
        "fitnotoken",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "meta-llama/Llama-3.1-70B", "topology": "2x2"},
        },
        "tpu-stacks:vllm.topology: '2x2' cannot hold meta-llama/Llama-3.1-70B",
    ),
    (
        "nearnamespace",
        {"tpu-stacks:cluster": CLUSTER, "tpu-stack:scenario": "vllm"},
        "tpu-stack:scenario: '<set>' is not read: its namespace is not tpu-stacks; did you mean tpu-stacks:scenario?",
    ),
    (
        "yaml12bool",
        {"tpu-stacks:cluster": {**CLUSTER, "deletionProtection": "on"}},
        "tpu-stacks:cluster.deletionProtection: 'on' is text, not true or false",
    ),
    (
        "noproject",
        {"gcp:project": None, "tpu-stacks:cluster": CLUSTER},
        "tpu-stacks:cluster.project is not set; set gcp:project",
    ),
    (
        "halves",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {
                "model": "Qwen/Qwen2.5-1.5B-Instruct",
                "exposure": "public",
                "sourceRanges": ["0.0.0.0/1", "128.0.0.0/1"],
            },
        },
        "tpu-stacks:vllm.sourceRanges: ['0.0.0.0/1', '128.0.0.0/1'] together cover the whole internet (0.0.0.0/0)",
    ),
    (
        "cidr",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": CLUSTER,
            "tpu-stacks:vllm": {"model": "Qwen/Qwen2.5-1.5B-Instruct", "exposure": "public"},
        },
        "tpu-stacks:vllm.sourceRanges: [] is empty for a public endpoint",
    ),
]


@pytest.mark.parametrize("stack,config,message", CASES, ids=[case[0] for case in CASES])
def test_bad_config_is_one_line_and_exit_2(project, stack, config, message):
    secure = {"tpu-stacks:hfToken": True} if stack == "fit" else None
    result = plan(project, stack, config, secure)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_a_good_config_plans(project):
    result = plan(
        project, "good", {"tpu-stacks:cluster": {**CLUSTER, "slices": [{"generation": "v6e", "topology": "2x4"}]}}
    )
    assert result.returncode == 0, result.stderr


def test_an_existing_cluster_plans_offline(project):
    """Bring your own cluster: the look-up is mocked like every other provider call."""
    result = plan(
        project,
        "byo",
        {
            "tpu-stacks:scenario": "vllm",
            "tpu-stacks:cluster": {
                "name": "c",
                "location": "us-central1-b",
                "existing": {"name": "prod", "location": "us-central1-b"},
            },
            "tpu-stacks:vllm": {
                "model": "Qwen/Qwen2.5-1.5B-Instruct",
                "replicas": {"min": 1, "max": 1},
                "sourceRanges": CLIENTS,
            },
        },
    )
    assert result.returncode == 0, result.stderr
    assert "gcp:container/cluster:Cluster" not in result.stdout and "kubernetes:apps/v1:Deployment" in result.stdout


def test_a_duplicate_key_is_refused_with_its_line(project):
    """The Pulumi CLI (yaml.v3) refuses a key given twice; so does the offline loader, naming both lines."""
    (project / "Pulumi.dup.yaml").write_text(
        "config:\n  gcp:project: proj\n  gcp:region: us-central1\n  tpu-stacks:cluster:\n"
        "    name: c\n    location: us-central1-b\n    name: d\n"
    )
    result = tpu_stacks("plan", "--cwd", project, "--stack", "dup")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "tpu-stacks: Pulumi.dup.yaml line 7 tpu-stacks:cluster.name: '<set>' is given twice (first at line 5); "
        "the Pulumi CLI refuses duplicate keys; keep one of them"
    )


def test_the_console_script_refuses_in_one_line_and_exit_2(project):
    """The same refusal from the installed `tpu-stacks` as a process: the exit code and the one line are what
    `main` gives (the console script adds only `sys.exit` and the collector's freeze)."""
    stack, config, message = CASES[0]
    plan(project, stack, config)  # writes the stack file
    result = subprocess.run(
        [PLAN, "plan", "--cwd", str(project), "--stack", stack], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr and "Traceback" not in result.stderr
