"""The `*Args` documentation (what other languages' SDKs show) is generated from the specs the code
validates: descriptions and defaults cannot drift apart again (`scripts/args_docs.py`)."""

import runpy
from pathlib import Path

import pytest
from pulumi.provider.experimental.analyzer import Analyzer

from scripts import args_docs
from tpu_stacks.inputs.field_rules import described_fields

COMPONENTS_DIR = Path(__file__).resolve().parents[2] / "components"


def _normal(text: str | None) -> str | None:
    return " ".join(text.split()) if text else None


def test_every_args_docstring_is_generated_from_its_spec() -> None:
    found = [(pair.args_name, diff) for pair in args_docs.PAIRS for diff in args_docs.differences(pair)]
    assert found == [], "run: venv/bin/python scripts/args_docs.py"


def test_the_generated_schema_carries_the_spec_descriptions_and_defaults() -> None:
    """What `pulumi package add` turns into SDK docs, read back from the schema inference itself."""
    components = runpy.run_path(str(COMPONENTS_DIR / "__main__.py"), run_name="tpu_stacks_plugin")["COMPONENTS"]
    schema = Analyzer("tpu-stacks").analyze(components)
    inputs = {name: definition.inputs for name, definition in schema["component_definitions"].items()}
    inputs |= {name: definition.properties for name, definition in schema["type_definitions"].items()}
    checked = 0
    for pair in args_docs.PAIRS:
        component = pair.args_name.removesuffix("Args") if pair.args_name.endswith("StackArgs") else None
        properties = inputs[component] if component in inputs else inputs[pair.args_name]
        for name, field in described_fields(pair.spec()).items():
            # an SDK names a field as its Python name says (modelConfigPath); a stack file may use a shorter alias
            prop = properties.get(field.alias or "") or properties[_camel(name)]
            assert _normal(prop.description) == args_docs.expected_doc(field), f"{pair.args_name}.{name}"
            checked += 1
    assert checked > 100


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def test_node_service_account_says_what_the_code_does() -> None:
    """The drift that started this: the docs said the Compute Engine default account is used."""
    text = args_docs.expected_doc(
        described_fields(next(p for p in args_docs.PAIRS if p.args_name == "TpuClusterArgs").spec())[
            "node_service_account"
        ]
    )
    assert "new `<name>-nodes` account" in text and "never the Compute Engine default" in text


def test_defaults_are_stated_in_the_config_spelling() -> None:
    pair = next(p for p in args_docs.PAIRS if p.args_name == "TpuClusterArgs")
    fields = described_fields(pair.spec())
    assert args_docs.expected_doc(fields["release_channel"]).endswith("Default: REGULAR.")
    assert args_docs.expected_doc(fields["system_pool"]).endswith("Default: machineType e2-standard-4, nodes 1.")
    assert args_docs.expected_doc(fields["min_version"]) == (  # no default to state
        "Lowest GKE version; checked against every TPU generation the cluster hosts. The cluster is created at its "
        "minor (`1.33` for 1.33.3-gke.1136000), which GKE resolves to that minor's newest patch in the channel."
    )


def test_a_drifted_docstring_is_found(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pair = next(p for p in args_docs.PAIRS if p.args_name == "ReplicaArgs")
    want = args_docs.expected_doc(described_fields(pair.spec())["max"])
    assert want.endswith("Default: 2.")
    drifted = tmp_path / "args.py"
    drifted.write_text(pair.args_path().read_text().replace(want, want.replace("Default: 2.", "Default: 3.")))
    monkeypatch.setattr(args_docs.Pair, "args_path", lambda self: drifted)
    assert args_docs.differences(pair) == [("max", want.replace("Default: 2.", "Default: 3."), want)]
    assert args_docs.rewrite(pair) and args_docs.differences(pair) == []  # the generator repairs it


def test_every_spec_field_is_described() -> None:
    """A field without a description reaches other languages' SDKs as a bare name."""
    bare = [
        f"{p.spec_name}.{name}"
        for p in args_docs.PAIRS
        for name, f in described_fields(p.spec()).items()
        if not f.description
    ]
    assert bare == []
