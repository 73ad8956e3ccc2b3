"""Each input is declared once, on its spec: the components' `args.py` are generated from the specs
(`scripts/gen_args.py`), and the committed files are what the specs generate today."""

import ast
import sys
import types
from typing import ClassVar, Literal

import pytest
from pulumi.provider.experimental.analyzer import Analyzer
from pydantic import Field

from scripts import gen_args
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.inputs.field_rules import ComponentInput, K8sName, SpecModel, described_fields
from tpu_stacks.inputs.validation import parse_section
from tpu_stacks.jetstream.component import JetStreamStack
from tpu_stacks.vllm.component import VllmStack
from tpu_stacks.vllm.spec import VllmSpec


@pytest.mark.parametrize("spec_module", gen_args.spec_modules())
def test_every_committed_args_module_is_what_its_spec_generates(spec_module: str) -> None:
    committed = gen_args.args_path(spec_module).read_text(encoding="utf-8")
    assert committed == gen_args.render(spec_module), "run: venv/bin/python scripts/gen_args.py (make args)"


def test_the_generator_finds_every_spec_module() -> None:
    """Found, not listed: a new workload's spec.py gets its args.py without touching the script."""
    modules = gen_args.spec_modules()
    assert {"tpu_stacks.cluster.spec", "tpu_stacks.vllm.spec", "tpu_stacks.gcp.monitoring.spec"} <= set(modules)
    assert gen_args.args_path("tpu_stacks.gcp.monitoring.spec").name == "args.py"
    assert gen_args.main(["--check"]) == 0


def test_a_spec_change_is_drift_the_check_reports(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A field added to the spec (or a description changed) without regenerating fails the check."""
    field = described_fields(VllmSpec)["startup_minutes"]
    monkeypatch.setattr(field, "description", "How long the startup probe waits (changed).")
    assert gen_args.main(["--check"]) == 1
    assert "components/tpu_stacks/vllm/args.py differs from its spec" in capsys.readouterr().out
    assert "How long the startup probe waits (changed). Default: 40." in gen_args.render("tpu_stacks.vllm.spec")


class Inner(SpecModel):
    ARGS: ClassVar[str] = "InnerThingArgs"

    size: int = 3
    """How big."""


class OtherInner(SpecModel):
    ARGS: ClassVar[str] = "InnerThingArgs"  # one SDK type for two specs of one shape

    size: int = 5
    """How big."""


class Toy(SpecModel):
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = (
        ComponentInput("cluster", ClusterSpec, "Where it runs.", required=True),
        ComponentInput("token", str, "A secret.", secret=True),
    )

    name: K8sName
    """Its name."""
    mode: Literal["a", "b"] = "a"
    """A or b."""
    inner: Inner = Field(default_factory=Inner)
    """Inner settings."""
    other: OtherInner | None = None
    """Other settings."""
    capacity: list[str | dict[str, str]] | None = None
    """Anything."""
    labels: dict[str, int] = Field(default_factory=dict)
    """Numbers by name."""


def _toy_classes(monkeypatch: pytest.MonkeyPatch) -> dict[str, ast.ClassDef]:
    """The toy spec module rendered, parsed back: its TypedDicts by name."""
    module = types.ModuleType("tests.toy.spec")
    for spec in (Inner, OtherInner, Toy):
        setattr(module, spec.__name__, spec)
        monkeypatch.setattr(spec, "__module__", "tests.toy.spec")
    monkeypatch.setitem(sys.modules, "tests.toy.spec", module)
    source = gen_args.render("tests.toy.spec")
    compile(source, "toy_args.py", "exec")
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}


def _items(node: ast.ClassDef) -> dict[str, tuple[str, str | None]]:
    items, body = {}, node.body
    for index, statement in enumerate(body):
        if isinstance(statement, ast.AnnAssign):
            after = body[index + 1] if index + 1 < len(body) else None
            doc = after.value.value if isinstance(after, ast.Expr) else None
            items[statement.target.id] = (ast.unparse(statement.annotation), doc)
    return items


def test_the_type_and_presence_of_each_input_follow_from_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    classes = _toy_classes(monkeypatch)
    toy = _items(classes["ToyArgs"])
    assert list(toy) == ["cluster", "name", "mode", "inner", "other", "capacity", "labels", "token"]  # required first
    assert toy["cluster"] == ("TpuClusterArgs", "Where it runs.")  # a component input, plain and required
    assert toy["name"] == ("str", "Its name.")  # a constrained string is a string; required stays required
    assert toy["mode"] == ("NotRequired[str]", "A or b. Default: a.")
    assert toy["inner"] == ("NotRequired[InnerThingArgs]", "Inner settings. Default: size 3.")
    assert toy["other"][0] == "NotRequired[InnerThingArgs]"  # `X | None` is X, absent when not given
    assert toy["capacity"][0] == "NotRequired[list[Any]]"  # a union the schema cannot say is Any
    assert toy["labels"][0] == "NotRequired[dict[str, int]]"
    assert toy["token"] == ("NotRequired[pulumi.Input[str]]", "A secret.")  # a secret takes an output


def test_specs_sharing_an_args_type_keep_only_what_they_agree_on(monkeypatch: pytest.MonkeyPatch) -> None:
    inner = _items(_toy_classes(monkeypatch)["InnerThingArgs"])
    assert inner == {"size": ("NotRequired[int]", None)}  # "How big. Default: 3." and "... 5." differ


def test_specs_of_different_shapes_cannot_share_an_args_type(monkeypatch: pytest.MonkeyPatch) -> None:
    class Wider(OtherInner):
        extra: bool = False
        """More."""

    monkeypatch.setattr(Wider, "__module__", "tests.toy.spec")
    _toy_classes(monkeypatch)
    module = sys.modules["tests.toy.spec"]
    monkeypatch.setattr(module, "OtherInner", Wider)
    with pytest.raises(ValueError, match="the specs named InnerThingArgs differ in their fields"):
        gen_args.render("tests.toy.spec")


def test_a_type_without_a_rule_is_refused() -> None:
    with pytest.raises(TypeError, match="no Args type for"):
        gen_args.Rendering("x.args").type_text(bytes)


def test_the_schema_reads_the_generated_inputs_with_plain_and_secret_as_declared() -> None:
    """Pulumi's inference reads the generated classes: spec fields and the cluster are plain (read at
    construction), the declared secrets are the only inputs that take an output."""
    components = Analyzer("tpu-stacks").analyze([VllmStack, JetStreamStack])["component_definitions"]
    for name, secrets in (("VllmStack", {"hfToken", "apiKeySecret"}), ("JetStreamStack", {"hfToken"})):
        inputs = components[name].inputs
        assert {key for key, prop in inputs.items() if not prop.plain} == secrets
        assert not inputs["cluster"].optional and inputs["cluster"].plain
    startup = " ".join(components["VllmStack"].inputs["startupMinutes"].description.split())
    assert startup == (
        "How long the startup probe waits for the first model load and XLA compile before restarting the server. "
        "Default: 40."
    )


def test_a_secret_a_component_does_not_declare_is_refused_not_dropped() -> None:
    """The section's outside keys are the spec's INPUTS: SaxmlStack takes no Hugging Face token."""
    from tpu_stacks.errors import UserError
    from tpu_stacks.saxml.spec import SaxmlSpec

    parse_section(VllmSpec, {"model": "m", "cluster": {}, "hf_token": "x"}, "vllm")  # declared: left to the caller
    with pytest.raises(UserError, match=r"saxml\.hf_token.*is not a known setting"):
        parse_section(SaxmlSpec, {"cluster": {}, "hf_token": "x"}, "saxml")
