"""Two distributions: the component library users install (runtime dependencies, compatible ranges)
and the offline planner (exact pins: it drives SDK internals). Measured in a fresh virtualenv for the
redesign; these checks keep the declarations honest on every run."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _dependencies(pyproject: Path, extra: str | None = None) -> dict[str, str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    declared = project["optional-dependencies"][extra] if extra else project["dependencies"]
    return {re.split(r"[<>=!~ \[]", spec, maxsplit=1)[0].lower(): spec for spec in declared}


def test_the_library_needs_no_provider_sdk_and_its_components_extra_brings_them():
    """The policy pack installs the library bare (catalogue, sizing, rules): no provider SDK. The
    components, the plugin and programs install `tpu-stacks[components]`."""
    deps = _dependencies(ROOT / "components" / "pyproject.toml")
    extra = _dependencies(ROOT / "components" / "pyproject.toml", "components")
    assert set(deps) == {"pulumi", "pydantic"}
    assert set(extra) == {"pulumi-gcp", "pulumi-kubernetes"}
    for spec in [*deps.values(), *extra.values()]:  # a library promises ranges, never one exact version
        assert "==" not in spec and "<" in spec and ">=" in spec, spec


def test_the_planner_pins_every_sdk_it_drives_exactly():
    deps = _dependencies(ROOT / "tools" / "preview" / "pyproject.toml")
    assert deps.pop("tpu-stacks").startswith("tpu-stacks>=")
    assert {"pulumi", "pulumi-policy", "pulumi-gcp", "pulumi-kubernetes", "jsonschema"} <= set(deps)
    assert all("==" in spec for spec in deps.values()), deps


def test_the_repo_environment_takes_its_pins_from_the_planner_only():
    """One source of truth for versions: requirements.txt installs both packages, pins only test tools."""
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pins = [line for line in lines if "==" in line]
    assert "-e ./components[components]" in lines and "-e ./tools/preview" in lines
    assert {pin.split("==")[0] for pin in pins} <= {"pytest", "pytest-xdist", "execnet", "ruff", "check-jsonschema"}


def test_the_library_ships_the_crds_its_components_declare():
    """VllmStack reads InferenceObjective's CRD from tpu_stacks/k8s/crds at run time, and the planner validates
    objectives against it: the library's package data must carry every file of that folder."""
    from fnmatch import fnmatch

    data = tomllib.loads((ROOT / "components" / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["tpu_stacks.k8s"]
    folder = ROOT / "components" / "tpu_stacks" / "k8s" / "crds"
    files = [path.relative_to(folder.parent).as_posix() for path in folder.iterdir()]
    assert "crds/inference.networking.x-k8s.io_inferenceobjectives.yaml" in files
    assert all(any(fnmatch(file, pattern) for pattern in patterns) for file in files), (files, patterns)


def test_every_data_file_of_the_library_ships():
    """A tracked file under components/tpu_stacks that is not Python is read at run time (the ledgers, the model
    configs, the CRDs) or built elsewhere (the images): the installed library must carry it, or an installed pack or
    SDK fails where the checkout works (a workload folder's upstream.toml did: the built pack's KeyError)."""
    import subprocess
    from fnmatch import fnmatch

    data = tomllib.loads((ROOT / "components" / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]
    listed = subprocess.run(
        ["git", "ls-files", "components/tpu_stacks"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    missing = []
    for name in listed:
        path = ROOT / name
        if path.suffix == ".py":
            continue
        package = path.parent
        while not (package / "__init__.py").is_file():
            package = package.parent
        dotted = package.relative_to(ROOT / "components").as_posix().replace("/", ".")
        relative = path.relative_to(package).as_posix()
        if not any(fnmatch(relative, pattern) for pattern in [*patterns.get(dotted, []), *patterns.get("*", [])]):
            missing.append(name)
    assert not missing, f"not in [tool.setuptools.package-data] of components/pyproject.toml: {missing}"


def test_the_live_commands_pin_their_clients_and_share_the_planners_protobuf():
    """tools/live adds the Kubernetes and Google clients; they must resolve beside the planner's exact pins (the
    newest google-cloud-monitoring needs protobuf 6.33, the planner pins 5.29): one environment, no second one."""
    deps = _dependencies(ROOT / "tools" / "live" / "pyproject.toml")
    assert deps.pop("tpu-stacks").startswith("tpu-stacks>=")
    assert deps.pop("tpu-stacks-preview").startswith("tpu-stacks-preview>=")
    assert {"kubernetes", "google-auth", "google-cloud-monitoring", "google-cloud-compute"} <= set(deps)
    assert all("==" in spec for spec in deps.values()), deps
    import google.protobuf

    preview = _dependencies(ROOT / "tools" / "preview" / "pyproject.toml")
    assert preview["protobuf"] == f"protobuf=={google.protobuf.__version__}"
