"""The workload registry (components/tpu_stacks/registry.py): every workload declares itself once and
every list of workloads derives from it, or is checked against it here.

- Each shipped workload's descriptor resolves: spec, Args, plan, component, monitoring, network, smoke test.
- Importing the registry and finding the workloads loads no provider SDK.
- The type Literals and the CI matrix agree with the registry (and the checks fail on a workload they do
  not know); each workload's dashboard sections, status cards and alerts live in its own package.
- A toy workload, a folder of its own and nothing else, gets a scenario, a plugin component, generated
  Args docs, its stack outputs, and a dashboard and alerts through its descriptor's capabilities.
- docs/architecture.md's lists of the files a new engine and a new TPU generation touch stay true.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import subprocess
import sys
import textwrap
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pydantic import BaseModel

import tpu_stacks
from scripts import args_docs, mutation, security_scan
from stacks import shipped
from tests.test_ci_workflow import listed_stacks
from tpu_stacks import registry, sizing
from tpu_stacks.catalog.engines.record import EngineVersion
from tpu_stacks.catalog.tpu import GENERATIONS
from tpu_stacks.gcp.monitoring.plan import plan_monitoring
from tpu_stacks.gcp.monitoring.targets import StepLog
from tpu_stacks.k8s import smoke_check
from tpu_stacks.registry import Ref, Workload, workloads

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "preview.yml"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
SHIPPED = tuple(w.name for w in workloads() if w.example_stack in shipped.SHIPPED)
"""The workloads whose example stack ships (stacks/shipped.py, the one list): every workload the registry finds."""


# --- the checks, as functions, so each can be shown to fail -------------------------------------------


def literal_drift(literal: Any, expected: set[str], extra: frozenset[str] = frozenset()) -> list[str]:
    """What differs between a Literal's values (less the `extra` values that are no workload's) and `expected`."""
    values = set(typing.get_args(literal)) - extra
    return [f"missing {name}" for name in sorted(expected - values)] + [
        f"unknown {name}" for name in sorted(values - expected)
    ]


def literal_checks() -> dict[str, list[str]]:
    found = workloads()
    return {
        "sizing.Engine": literal_drift(
            sizing.Engine,
            {w.sizing_engine for w in found if w.sizing_engine},
            frozenset({"generic"}),  # a server sizing knows by its flags only, no workload of ours
        ),
        "EngineVersion.engine": literal_drift(
            EngineVersion.model_fields["engine"].annotation, {e for w in found for e in w.engines}
        ),
    }


def ci_matrix() -> list[str]:
    """The stacks CI previews: what the workflow's rule (its `stacks` job) lists, for each matrix that reads it."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    listed = listed_stacks(ROOT, workflow)
    return [
        stack
        for job in workflow["jobs"].values()
        for output, stacks in listed.items()
        if job.get("strategy", {}).get("matrix", {}).get("stack")
        == f"${{{{ fromJSON(needs.stacks.outputs.{output}) }}}}"
        for stack in stacks
    ]


def workloads_missing_from_ci() -> list[str]:
    matrix = ci_matrix()
    return [w.name for w in workloads() if w.example_stack not in matrix]


def naming_every(root: Path, names: list[str], skip: tuple[str, ...]) -> list[str]:
    """Files under `root` (git's, outside tests/ and docs/ and `skip`) whose text names each of `names`:
    the hand-written lists a new one of them would have to join."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    patterns = [re.compile(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", re.IGNORECASE) for name in names]
    found = []
    for path in sorted(listed):
        if path.startswith(("tests/", "docs/", *skip)) or not (root / path).is_file():
            continue
        try:
            text = (root / path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if all(pattern.search(text) for pattern in patterns):
            found.append(path)
    return found


def documented(block: str) -> list[str]:
    text = ARCHITECTURE.read_text()
    inside = text.split(f"<!-- {block}:begin -->")[1].split(f"<!-- {block}:end -->")[0]
    return re.findall(r"^- `([^`]+)`", inside, re.MULTILINE)


# --- the shipped workloads ------------------------------------------------------------------------------


def test_the_shipped_workloads_are_found_in_their_folders():
    assert registry.names() == SHIPPED
    for workload in workloads():
        assert workload.package == f"tpu_stacks.{workload.name}"
        assert all(module.startswith(workload.package + ".") for module in workload.modules())


@pytest.mark.parametrize("name", SHIPPED)
def test_each_descriptor_resolves_to_what_it_names(name: str):
    workload = registry.workload(name)
    spec = workload.spec.load()
    assert issubclass(spec, BaseModel)
    assert typing.is_typeddict(workload.args.load())
    component = workload.component.load()
    assert issubclass(component, pulumi.ComponentResource)
    for ref in (workload.plan, workload.network, workload.monitoring_target, *monitoring_capabilities(workload)):
        assert callable(ref.load()), ref
    assert (workload.smoke_test is None) == (workload.sizing_engine is None)  # every server has one, training none
    if workload.smoke_test is not None:
        assert callable(workload.smoke_test.load())
    # a server declares the shape of its answer, one the smoke script judges; a training job none
    assert (workload.smoke_answer is None) == (workload.smoke_test is None)
    assert workload.smoke_answer is None or workload.smoke_answer in smoke_check.CHECKS
    args_module = __import__(workload.args.module, fromlist=["x"])
    spec_module = __import__(workload.spec.module, fromlist=["x"])
    for args_name, spec_name in workload.args_docs:
        assert typing.is_typeddict(getattr(args_module, args_name))
        assert issubclass(getattr(spec_module, spec_name), BaseModel)
    stack = yaml.safe_load((ROOT / f"Pulumi.{workload.example_stack}.yaml").read_text())
    assert stack["config"]["tpu-stacks:scenario"] == name
    assert f"tpu-stacks:{workload.section}" in stack["config"]


def test_exports_name_attributes_the_component_declares():
    """Each export's first attribute is one the component class declares (an annotation or a `self.<name> =`
    in its body or in the body of a base class of the package: the workload lifecycle sets `cluster`), so a typo in a
    descriptor fails here, not at `pulumi up`."""
    for workload in workloads():
        classes = [c for c in workload.component.load().__mro__ if c.__module__.startswith("tpu_stacks.")]
        tree = ast.Module(body=[ast.parse(textwrap.dedent(inspect.getsource(c))) for c in classes], type_ignores=[])
        declared = {
            node.target.id
            for node in ast.walk(tree)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        }
        declared |= {
            target.attr
            for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
        }
        for export in workload.exports:
            assert export.path.split(".")[0] in declared, (workload.name, export)


def test_the_registry_loads_no_provider_sdk():
    probe = textwrap.dedent(
        """
        import sys
        from tpu_stacks.registry import workloads
        found = workloads()
        for workload in found:
            workload.spec.load()
        sdk = sorted(m for m in sys.modules if m.split(".")[0] in ("pulumi", "pulumi_gcp", "pulumi_kubernetes"))
        print(len(found), sdk)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"{len(workloads())} []"


def monitoring_capabilities(workload: Workload) -> tuple[Ref, ...]:
    """What the shared monitoring layer asks a workload's descriptor for (gcp/monitoring/capabilities.py)."""
    optional = (workload.status_cards, workload.alerts)
    return (workload.dashboard_sections, *(ref for ref in optional if ref is not None))


def test_a_ref_loads_a_dotted_attribute_and_fails_on_a_wrong_one():
    assert Ref("tpu_stacks.registry:Workload.secret_keys").load() is Workload.secret_keys
    with pytest.raises(AttributeError):
        Ref("tpu_stacks.registry:NoSuchThing").load()


def test_every_list_of_workloads_derives_from_the_registry():
    from stacks.config import SECRET_KEYS
    from stacks.scenarios import scenarios
    from tpu_stacks.plugin import public_components

    assert list(scenarios()) == ["cluster", *registry.names()]
    names = {c.__name__ for c in public_components()}
    assert {w.component.load().__name__ for w in workloads()} <= names
    assert {p.args_name for p in args_docs.pairs()} >= {a for w in workloads() for a, _ in w.args_docs}
    assert {f"components/tpu_stacks/{n}/plan.py" for n in SHIPPED} <= set(mutation.MODULES)
    assert {f"components/tpu_stacks/{n}/network.py" for n in SHIPPED} <= set(mutation.MODULES)
    assert set(security_scan.STACKS) == {w.example_stack for w in workloads()}  # each workload's example stack
    assert SECRET_KEYS == ("hfToken", "vllmApiKey")


# --- the Literals, the dashboard and the CI matrix against the registry --------------------------------


def test_the_type_literals_agree_with_the_registry():
    assert literal_checks() == {"sizing.Engine": [], "EngineVersion.engine": []}


def test_each_workloads_dashboard_and_alerts_live_in_its_own_package():
    """No table in shared code lists them: the shared layer asks the descriptor."""
    for workload in workloads():
        for ref in monitoring_capabilities(workload):
            assert ref.module.startswith(f"tpu_stacks.{workload.name}."), (workload.name, ref)
    assert registry.workload("saxml").status_cards is None  # optional: Saxml has no card of its own
    assert [w.name for w in workloads() if w.alerts is not None and w.name in SHIPPED] == ["raytrain"]


def test_the_ci_matrix_previews_each_workloads_stack():
    assert workloads_missing_from_ci() == []


def test_the_checks_fail_on_a_workload_they_do_not_know(toy: Workload):
    """With the toy registered, each of the checks above names it."""
    checks = literal_checks()
    assert checks["sizing.Engine"] == ["missing toy-engine"]
    assert checks["EngineVersion.engine"] == ["missing toy-engine"]
    assert workloads_missing_from_ci() == ["toyserve"]
    assert literal_drift(typing.Literal["a", "b"], {"a"}) == ["unknown b"]


# --- a toy workload: one folder, nothing else touched ------------------------------------------------

TOY_FILES = {
    "__init__.py": '"""A toy workload: a folder of its own, found by the registry."""\n',
    "spec.py": '''
        from pydantic import BaseModel, ConfigDict


        class ToySpec(BaseModel):
            model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

            greeting: str = "hello"
            """What the toy server answers."""
        ''',
    "args.py": """
        from typing import TypedDict

        import pulumi


        class ToyStackArgs(TypedDict, total=False):
            greeting: pulumi.Input[str]
        """,
    "plan.py": """
        def plan_toy(spec):
            return spec.greeting.upper()
        """,
    "monitoring.py": """
        from tpu_stacks.catalog.engines.record import EngineVersion
        from tpu_stacks.gcp.monitoring.alert import Alert
        from tpu_stacks.gcp.monitoring.model import Section
        from tpu_stacks.gcp.monitoring.queries import Scope
        from tpu_stacks.gcp.monitoring.spec import MonitoringSpec
        from tpu_stacks.gcp.monitoring.targets import Target
        from tpu_stacks.gcp.monitoring.widgets import note, scorecard

        # not a catalogued engine (the engine Literal knows no toy): built without validation
        TOY_ENGINE = EngineVersion.model_construct(engine="toy-engine", version="0.1", images=(), source="a toy")


        def target(plan):
            return Target(
                kind="toyserve",
                title=f"Toy answering {plan}",
                project="toy-project",
                universe="googleapis.com",
                location="us-central2",
                scope=Scope(cluster="toy-cluster", namespace="toy"),
                engine=TOY_ENGINE,
                monitoring=MonitoringSpec(),
                tpu_containers=("toy",),
                deployment="toy",
                replicas=1,
            )


        def sections(target):
            return [Section(title="Toy", subtitle=target.title, widgets=(note("Greeting", target.title),))]


        def cards(target):
            return [scorecard("Greetings per second", 'sum(rate(toy_greetings_total{namespace="toy"}[5m]))')]


        def alerts(target):
            return [
                Alert(
                    id="toy-silent",
                    title=f"{target.title}: silent",
                    query='sum(rate(toy_greetings_total{namespace="toy"}[5m])) == 0',
                    minutes=10,
                    severity="WARNING",
                    why="The toy greets nobody.",
                )
            ]
        """,
    "network.py": """
        def network(plan):
            return ()
        """,
    "component.py": """
        from typing import Optional

        import pulumi

        from tpu_stacks.toyserve.args import ToyStackArgs
        from tpu_stacks.toyserve.plan import plan_toy
        from tpu_stacks.toyserve.spec import ToySpec

        TYPE = "tpu-stacks:index:ToyStack"


        class ToyStack(pulumi.ComponentResource):
            answer: pulumi.Output[str]

            def __init__(self, name: str, args: ToyStackArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
                super().__init__(TYPE, name, {}, opts)
                spec = ToySpec.model_validate({k: v for k, v in args.items() if k != "cluster"})
                self.answer = pulumi.Output.from_input(plan_toy(spec))
                self.register_outputs({"answer": self.answer})
        """,
    "engine.py": """
        from tpu_stacks.catalog.engine_traffic import EngineTraffic
        from tpu_stacks.catalog.engines.declared import EngineDeclaration, GatewaySupport
        from tpu_stacks.catalog.engines.record import CommandMarker, EngineVersion, Flag
        from tpu_stacks.catalog.image_users import NONROOT_UID, ImageUser
        from tpu_stacks.catalog.inference_gateway import ServingApi
        from tpu_stacks.catalog.upstream import number
        from tpu_stacks.errors import UserError

        # not in the engine Literal (the one edit outside the folder a real engine makes): built without validation
        TOY = EngineVersion.model_construct(
            engine="toy-engine",
            version="0.1",
            images=("example.com/toy-engine",),
            workload="serve",
            commands=(CommandMarker(contains="toy_engine.serve"),),
            flags=(Flag(name="--toy-shards", meaning="tensor_parallel", default="1"),),
            user=ImageUser(NONROOT_UID, "the toy's Dockerfile sets USER 65532"),
            source="https://example.com/toy-engine/0.1/server.py, the toy's own server",
        )


        def check_architecture(model, key, value):
            if model.architecture not in (None, "ToyForCausalLM"):
                raise UserError(key, value, f"is a {model.architecture}: toy-engine serves only ToyForCausalLM")


        ENGINE = EngineDeclaration(
            versions=(TOY,),
            api=ServingApi.model_construct(
                engine="toy-engine",
                openai=True,
                port_flag="--port",
                default_port=number("toy-engine.port"),  # the folder's own ledger (upstream.toml)
                why="the toy serves OpenAI's Completions",
                source="the toy",
                serves_models=True,
            ),
            gateway=GatewaySupport(fronts=False, why="the toy exports none of the picker's gauges"),
            traffic=EngineTraffic(
                sizing_engine="toy-engine", kv_cache="paged", builds=(TOY,), calibrations=(), uncalibrated="a toy"
            ),
            check_architecture=check_architecture,
        )
        """,
    "upstream.toml": """
        [pins.toy-engine]
        kind = "source"
        title = "The toy engine's source"
        repository = "example/toy-engine"
        version = "v0.1"

        [[row]]
        id = "toy-engine.port"
        pin = "toy-engine"
        claim = "The toy server listens on 8080."
        relied_on_by = ["components/tpu_stacks/toyserve/engine.py"]
        read = 2026-11-29
        path = "toy_engine/serve.py"
        line = 3
        literal = "PORT = 8080"
        value = 8080
        """,
    "descriptor.py": """
        from tpu_stacks.registry import Export, Ref, Workload

        WORKLOAD = Workload(
            name="toyserve",
            section="toyserve",
            spec=Ref("tpu_stacks.toyserve.spec:ToySpec"),
            args=Ref("tpu_stacks.toyserve.args:ToyStackArgs"),
            plan=Ref("tpu_stacks.toyserve.plan:plan_toy"),
            component=Ref("tpu_stacks.toyserve.component:ToyStack"),
            monitoring_target=Ref("tpu_stacks.toyserve.monitoring:target"),
            dashboard_sections=Ref("tpu_stacks.toyserve.monitoring:sections"),
            status_cards=Ref("tpu_stacks.toyserve.monitoring:cards"),
            alerts=Ref("tpu_stacks.toyserve.monitoring:alerts"),
            network=Ref("tpu_stacks.toyserve.network:network"),
            smoke_test=None,
            args_docs=(("ToyStackArgs", "ToySpec"),),
            exports=(Export("answer", "answer"),),
            engine=Ref("tpu_stacks.toyserve.engine:ENGINE"),
            engines=("toy-engine",),
            sizing_engine="toy-engine",
            example_stack="toyserve",
        )
        """,
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workload]:
    """The toy folder, in a directory of its own that the `tpu_stacks` package also searches."""
    folder = tmp_path / "toyserve"
    folder.mkdir()
    for name, source in TOY_FILES.items():
        (folder / name).write_text(textwrap.dedent(source).lstrip())
    monkeypatch.setattr(tpu_stacks, "__path__", [*tpu_stacks.__path__, str(tmp_path)])
    try:
        yield registry.workload("toyserve")
    finally:
        for module in [m for m in sys.modules if m.startswith("tpu_stacks.toyserve")]:
            del sys.modules[module]


def test_a_toy_workload_gets_a_scenario_a_plugin_component_args_docs_and_mutation_targets(toy: Workload):
    from stacks.scenarios import scenarios
    from tpu_stacks.plugin import TpuStacksProvider, public_components

    assert toy.package == "tpu_stacks.toyserve"
    scenario = scenarios()["toyserve"]
    assert scenario.section == "toyserve"

    component = toy.component.load()
    assert component in public_components()
    schema = yaml.safe_load(TpuStacksProvider(public_components()).schema)
    assert "greeting" in schema["resources"]["tpu-stacks:index:ToyStack"]["inputProperties"]

    pair = next(p for p in args_docs.pairs() if p.args_name == "ToyStackArgs")
    assert args_docs.differences(pair) == [("greeting", None, "What the toy server answers. Default: hello.")]
    assert args_docs.rewrite(pair)
    assert '    """What the toy server answers. Default: hello."""' in pair.args_path().read_text()
    assert args_docs.differences(pair) == []

    assert mutation.workload_modules(toy) == {
        "components/tpu_stacks/toyserve/plan.py": ["tests/toyserve/test_plan.py"],
        "components/tpu_stacks/toyserve/network.py": ["tests/test_workload_networks.py"],
    }


def test_a_toy_engine_declared_in_its_folder_passes_the_shared_engine_tests(
    toy: Workload, monkeypatch: pytest.MonkeyPatch
):
    """The toy's engine.py (record, traffic entry, HTTP API, model-class check, gateway answer) is all the catalogue
    needs: its shared tables collect it through the descriptor, and the shared tests of the engine catalogue, the
    serving APIs, the traffic records and the pack's tensor-parallel rule hold with it. The Literal it misses (the
    one edit outside the folder) is named by test_the_checks_fail_on_a_workload_they_do_not_know."""
    monkeypatch.syspath_prepend(str(ROOT / "policies"))  # the pack's package, as tests/policies/conftest.py does
    from tests.catalog import test_engines, test_inference_gateway
    from tests.policies.test_matching_numbers import V6E, check, pod
    from tests.traffic import test_engine_traffic
    from tpu_stacks.catalog import engines
    from tpu_stacks.catalog.engine_models import check_architecture
    from tpu_stacks.catalog.engine_traffic import TRAFFIC, traffic_of
    from tpu_stacks.catalog.inference_gateway import gateway_support, serving_api
    from tpu_stacks.catalog.model_shape import ModelArchitecture
    from tpu_stacks.catalog.upstream import fact
    from tpu_stacks.errors import UserError

    declared = toy.engine.load() if toy.engine else None
    assert declared is not None and declared.name == "toy-engine"
    record = declared.versions[-1]
    assert engines.ENGINES[-1] is record and engines.engine("toy-engine") is record
    assert engines.engine_of_command(["python3", "-m", "toy_engine.serve"]) is record
    assert engines.engine_of_image("example.com/toy-engine:0.1") is record
    assert traffic_of("toy-engine") is declared.traffic and "toy-engine" in TRAFFIC
    assert serving_api("toy-engine") is declared.api and declared.api.default_port == 8080
    assert fact("toy-engine.port").pin == "toy-engine"  # the folder's upstream.toml, merged into the ledger
    assert gateway_support("toy-engine") == declared.gateway
    with pytest.raises(UserError, match="toy-engine serves only ToyForCausalLM"):
        check_architecture("toy-engine", ModelArchitecture.model_construct(architecture="LlamaForCausalLM"), "k", "m")

    # the shared tests, with the toy among the engines;
    # the engine Literal is the one line a real engine adds outside its folder (catalog/engines/record.py)
    widened = typing.Literal[(*typing.get_args(test_inference_gateway.EngineName), "toy-engine")]  # type: ignore[misc]
    monkeypatch.setattr(test_inference_gateway, "EngineName", widened)
    test_inference_gateway.test_every_catalogued_engine_has_one_serving_api()
    test_inference_gateway.test_every_engine_a_folder_declares_answers_whether_the_gateway_fronts_it()
    test_engines.test_every_entry_cites_its_source(record)
    test_engines.test_each_engine_with_an_image_names_its_user_and_each_exporter_its_port()
    test_engine_traffic.test_every_calibrated_engine_has_a_record_and_no_other()
    # the pack reads the toy's tensor-parallel flag as its record spells it
    (problem,) = check(pod(V6E, "2x4", 8, command=["python3", "-m", "toy_engine.serve", "--toy-shards=4"]))
    assert "container arg --toy-shards" in problem and problem.endswith("set it to 8")


def test_a_toy_workload_builds_its_scenario_and_exports_its_outputs(toy: Workload, monkeypatch: pytest.MonkeyPatch):
    from stacks.config import LoadedStack, StackConfig
    from stacks.scenarios import scenarios
    from tests.mocks import capture

    exported: dict[str, Any] = {}
    monkeypatch.setattr(pulumi, "export", lambda name, value: exported.__setitem__(name, value))
    stack = LoadedStack(
        config=StackConfig(scenario="toyserve", cluster={"name": "c"}), scenario="toyserve", section={"greeting": "hi"}
    )

    class NoSecrets:
        def get(self, key: str) -> None:
            return None

    answers: list[str] = []

    def build() -> None:
        scenarios()["toyserve"].build(stack, typing.cast(Any, NoSecrets()))
        exported["answer"].apply(answers.append)

    mocks = capture(build)
    assert [r.typ for r in mocks.resources] == ["tpu-stacks:index:ToyStack"]
    assert [r.name for r in mocks.resources] == ["toyserve"]
    assert answers == ["HI"]


def test_a_toy_workload_gets_a_dashboard_and_alerts_through_its_descriptor(toy: Workload):
    """The shared layer draws the toy's own section and card and declares its own alert beside the ones every
    server gets, though no shared module names it."""
    target = toy.monitoring_target.load()(toy.plan.load()(toy.spec.load()()))
    planned = plan_monitoring(target, "toyserve")
    board = planned.dashboard
    assert [s.title for s in board.sections] == ["Now", "Toy", "TPUs", "Pods"]
    assert [w.title for w in board.sections[0].widgets] == [
        "Replicas ready",
        "Greetings per second",
        "TensorCore utilization (average)",
    ]
    assert board.sections[1].widgets[0].text is not None
    assert board.sections[1].widgets[0].text.content == "Toy answering HELLO"
    assert (board.display_name, board.labels) == (
        "tpu-stacks toyserve: toy-cluster/toy",
        {"tpu-stacks": "", "toyserve": ""},
    )
    alerts = {a.id: a for a in planned.alerts}
    assert list(alerts) == [
        "serving-pods-not-ready",
        "tpu-hbm-near-full",
        "tpu-nodes-idle",
        "pods-restarting",
        "toy-silent",
    ]
    assert not alerts["tpu-hbm-near-full"].enabled  # a server's HBM is full of KV cache by design
    assert planned.step_log_metric is None

    # the same toy as a training job that logs its steps: no idle-node alert, HBM watched, a step metric
    step = StepLog(metric="toy_step_seconds", contains="step ", line=r"step \d+: ([0-9.]+)s", description="toy steps")
    trained = plan_monitoring(dataclasses.replace(target, serving=False, step_log=step), "toyserve")
    trained_alerts = {a.id: a for a in trained.alerts}
    assert "tpu-nodes-idle" not in trained_alerts
    assert trained_alerts["tpu-hbm-near-full"].enabled
    assert trained.step_log_metric == "tpu-stacks/toy-cluster/toy/toy_step_seconds"


def test_a_registered_workload_outside_the_package_and_a_clash():
    extra = Workload(**{**registry.workload("vllm").__dict__, "name": "elsewhere"})
    with registry.registered(extra):
        assert "elsewhere" in registry.names()
        with pytest.raises(ValueError, match="registered already"):
            with registry.registered(extra):
                pass
    assert "elsewhere" not in registry.names()
    with pytest.raises(ValueError, match="registered already"):
        with registry.registered(registry.workload("vllm")):
            pass


# --- docs/architecture.md -----------------------------------------------------------------------------


RECORDS = (
    "components/tpu_stacks/catalog/upstream_ledger.toml",
    "scripts/mutation_equivalent.txt",
)
"""Records that name each workload among many entries, not lists a new engine joins: the upstream ledger (rows about
each upstream, named by it; a new engine's rows go in its folder's own `upstream.toml`, as sglang/upstream.toml) and
the equivalent mutants (one line per mutant of a module, by its path)."""


def test_the_files_a_new_engine_touches_are_listed_and_few():
    listed = documented("engine-files")
    assert all((ROOT / path).is_file() for path in listed), listed
    own = tuple(f"components/tpu_stacks/{name}/" for name in registry.names())
    unlisted = sorted(set(naming_every(ROOT, list(registry.names()), (*own, *RECORDS))) - set(listed))
    assert unlisted == [], (
        f"these files name every workload: list them in docs/architecture.md or derive them: {unlisted}"
    )
    assert len(listed) <= 9


def test_the_files_a_new_generation_touches_are_the_files_that_name_every_generation():
    listed = documented("generation-files")
    # The ledger is a record, not a list a new generation joins: its claims quote upstream sources that name them.
    records = ("components/tpu_stacks/catalog/upstream_ledger.toml",)
    assert naming_every(ROOT, [g.name for g in GENERATIONS], records) == listed


def test_the_census_finds_a_new_hand_written_list(tmp_path: Path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "lists.py").write_text('KINDS = ("vllm", "saxml", "jetstream", "raytrain", "sglang")\n')
    (tmp_path / "one.py").write_text('KIND = "vllm"  # VllmStack, JetStreamStack: not names\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "lists.py").write_text('KINDS = ("vllm", "saxml", "jetstream", "raytrain", "sglang")\n')
    assert naming_every(tmp_path, list(SHIPPED), ()) == ["lists.py"]
