"""Stack config is read as the Pulumi CLI hands it to a program."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tpu_stacks.errors import UserError
from tpu_stacks_preview.config import load_stack_config, secret_placeholder


def _project(tmp_path: Path, pulumi_yaml: str, stacks: dict[str, str]) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(pulumi_yaml)
    (tmp_path / "__main__.py").write_text("")
    for name, text in stacks.items():
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    return tmp_path


PROJECT = """\
name: demo
runtime: python
config:
  replicas:
    type: integer
    default: 1
  zone: us-central2-b
  gcp:region:
    value: us-central2
"""


def test_keys_values_and_secrets_as_the_cli_passes_them(tmp_path: Path) -> None:
    stack = """\
config:
  demo:replicas: 3
  demo:enabled: true
  demo:labels:
    team: ml
    nested: {password: {secure: AAAB}}
  demo:token:
    secure: AAABAGZha2U=
  gcp:project: proj
"""
    config = load_stack_config(_project(tmp_path, PROJECT, {"dev": stack}), "dev")
    assert config.project == "demo" and config.stack == "dev"
    assert config.values["demo:replicas"] == "3"  # the stack overrides the Pulumi.yaml default
    assert config.values["demo:zone"] == "us-central2-b"  # bare key -> project namespace
    assert config.values["gcp:region"] == "us-central2"  # foreign namespace keeps its own
    assert config.values["demo:enabled"] == "true"
    labels = json.loads(config.values["demo:labels"])  # objects arrive JSON-encoded
    assert labels == {"nested": {"password": secret_placeholder("demo:labels")}, "team": "ml"}
    assert config.values["demo:token"] == secret_placeholder("demo:token")
    assert config.secret_keys == {"demo:token", "demo:labels"}
    assert config.namespace("gcp") == {"project": "proj", "region": "us-central2"}


def test_defaults_apply_when_the_stack_is_silent(tmp_path: Path) -> None:
    config = load_stack_config(_project(tmp_path, PROJECT, {"dev": "config: {}\n"}), "dev")
    assert config.values["demo:replicas"] == "1"


def test_missing_stack_file_names_the_stacks_that_exist(tmp_path: Path) -> None:
    project = _project(tmp_path, PROJECT, {"dev": "config: {}\n", "prod": "config: {}\n"})
    with pytest.raises(UserError) as caught:
        load_stack_config(project, "staging")
    assert "Pulumi.staging.yaml" in str(caught.value)
    assert "dev, prod" in str(caught.value)


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("config:\n  demo:replicas: three\n", "not of type integer"),
        ("config:\n  replicas: 3\n", "has no namespace"),
    ],
)
def test_bad_stack_values_are_user_errors(tmp_path: Path, stack: str, expected: str) -> None:
    with pytest.raises(UserError, match=expected):
        load_stack_config(_project(tmp_path, PROJECT, {"dev": stack}), "dev")


def test_required_declaration_without_value_is_a_user_error(tmp_path: Path) -> None:
    project = PROJECT + "  modelId:\n    type: string\n"
    with pytest.raises(UserError, match="demo:modelId"):
        load_stack_config(_project(tmp_path, project, {"dev": "config: {}\n"}), "dev")


OBJECTS = """\
name: demo
runtime: python
config:
  cluster:
    type: object
    description: the cluster
  identity:
    type: object
    default: {}
"""


def test_object_declarations_as_the_cli_reads_them(tmp_path: Path) -> None:
    """`type: object` (CLI >= 3.187): the stack's mapping arrives JSON-encoded; a default applies when silent."""
    stack = "config:\n  demo:cluster:\n    name: c\n    slices: [{generation: v5e}]\n"
    config = load_stack_config(_project(tmp_path, OBJECTS, {"dev": stack}), "dev")
    assert json.loads(config.values["demo:cluster"]) == {"name": "c", "slices": [{"generation": "v5e"}]}
    assert config.values["demo:identity"] == "{}"


@pytest.mark.parametrize(
    ("stack", "expected"),
    [
        ("config:\n  demo:cluster: c\n", r"demo:cluster: 'c' is not of type object as Pulumi.yaml declares"),
        ("config: {}\n", r"demo:cluster: '\(unset\)' is required .*; write demo:cluster: as a mapping in Pulumi.dev"),
    ],
)
def test_object_declarations_refuse_a_scalar_or_nothing(tmp_path: Path, stack: str, expected: str) -> None:
    with pytest.raises(UserError, match=expected):
        load_stack_config(_project(tmp_path, OBJECTS, {"dev": stack}), "dev")


def test_an_unknown_declared_type_is_refused(tmp_path: Path) -> None:
    project = PROJECT + "  cluster:\n    type: map\n"
    with pytest.raises(UserError, match=r"Pulumi.yaml config.cluster.type: 'map' is not a config type"):
        load_stack_config(_project(tmp_path, project, {"dev": "config: {}\n"}), "dev")


def test_the_project_file_declares_its_cli_and_structured_keys() -> None:
    root = Path(__file__).resolve().parents[2]
    project = yaml.safe_load((root / "Pulumi.yaml").read_text())
    assert project["requiredPulumiVersion"] == ">=3.187.0"  # `type: object` config (pulumi/pulumi#20132)
    for key in ("cluster", "identity"):
        assert project["config"][key]["type"] == "object" and project["config"][key]["description"]
    assert "cannot type" not in (root / "Pulumi.yaml").read_text()
