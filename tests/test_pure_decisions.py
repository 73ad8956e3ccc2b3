"""The decision layer is pure: catalogue, sizing, names and every spec/plan import no provider SDK.

Decisions must be testable, importable by the policy pack and reusable without Pulumi's engine, so
a plan module that pulls in pulumi_gcp or pulumi_kubernetes (even for a regex) fails here.
"""

import json
import subprocess
import sys

import pytest

PURE = [
    "tpu_stacks.catalog.tpu",
    "tpu_stacks.catalog.models",
    "tpu_stacks.catalog.disks",
    "tpu_stacks.awaits",
    "tpu_stacks.sizing",
    "tpu_stacks.names",
    "tpu_stacks.errors",
    "tpu_stacks.validation",
    "tpu_stacks.annotations",
    "tpu_stacks.images",
    "tpu_stacks.exposure",
    "tpu_stacks.k8s.connectivity",  # the connectivity contract; policies are built from it elsewhere
    "tpu_stacks.k8s.platform_flows",
    "tpu_stacks.smoke_plan",
    "tpu_stacks.gcp.universe",
    "tpu_stacks.cluster.spec",
    "tpu_stacks.cluster.plan",
    *(
        f"tpu_stacks.{workload}.{part}"
        for workload in ("vllm", "saxml", "jetstream", "raytrain")
        for part in ("spec", "plan")
    ),
]
SDKS = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")


@pytest.mark.parametrize("module", PURE)
def test_module_imports_no_provider_sdk(module: str) -> None:
    probe = (
        f"import json, sys, {module}; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {SDKS!r})))"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    )
    assert loaded == [], f"{module} loads {loaded[:5]}"


def test_the_probe_can_fail() -> None:
    """The same probe sees an SDK when a module does load one (the check is not vacuous)."""
    probe = f"import json, sys, tpu_stacks.cluster.component; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {SDKS!r})))"
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    )
    assert "pulumi_gcp" in loaded


def test_the_policy_pack_loads_no_provider_sdk() -> None:
    """The pack judges wire values with the same decision code; a provider SDK would only slow its start
    (and burden a published pack's install)."""
    probe = (
        "import json, sys; sys.path.insert(0, 'policies'); import tpu_policies;"
        " print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi_gcp', 'pulumi_kubernetes'))))"
    )
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=root)
    assert json.loads(result.stdout) == []
