"""Run a Pulumi Python policy pack against a capture the way `pulumi preview --policy-pack` does.

The engine speaks `pulumirpc.Analyzer` to the pack: GetAnalyzerInfo, then Configure with the
reconciled policy config (schema defaults, then the pack's initial config, then the user's config
file), ConfigureStack, Analyze once per resource and AnalyzeStack once. Skipping the Configure
replay would silently drop the pack's initial config, so both transports replay it:

* subprocess (the default, what the CLI does): `python -u <pack dir>` with the engine's PULUMI_*
  environment, the port read from stdout, real gRPC on loopback;
* in-process (fast, for tests): the pack's `__main__.py` runs with `PolicyPack.__init__`
  intercepted (a real PolicyPack serves forever), and the same messages go straight to
  pulumi-policy's servicer.

The engine sends what it holds, not Python objects: resource references downgraded to an id or
URN, unknowns as the unknown sentinel, secrets tagged. A diagnostic without a URN from Analyze
belongs to the resource analysed.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import os
import queue
import runpy
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import grpc
import jsonschema
import yaml
from google.protobuf import empty_pb2, json_format
from google.protobuf.message import Message
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from tpu_stacks.errors import UserError
from tpu_stacks_preview.analyze_requests import analyze_request, analyze_stack_request
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.imports import isolated_imports
from tpu_stacks_preview.wire import (
    dict_to_struct,
)

Enforcement = Literal["advisory", "mandatory", "remediate", "disabled"]
Transport = Literal["subprocess", "in-process"]
_LEVELS: dict[int, Enforcement] = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.REMEDIATE: "remediate",
    analyzer_pb2.DISABLED: "disabled",
}
_LEVEL_VALUES = {name: value for value, name in _LEVELS.items()}
_GRPC_OPTIONS = [("grpc.max_receive_message_length", 400 * 1024 * 1024)]
_START_TIMEOUT = 60.0


class PolicyError(Exception):
    """The pack could not be run (failed to start, crashed, broke the protocol)."""


@dataclass(frozen=True)
class Violation:
    """One diagnostic, attributed as the engine attributes it."""

    policy: str
    enforcement: Enforcement
    urn: str | None  # None: a stack policy that named no resource
    message: str


@dataclass
class PolicyResult:
    """What a pack reported: its name, its policies and the violations, in a stable order."""

    pack: str
    violations: list[Violation] = field(default_factory=list)
    version: str = ""
    policies: list[str] = field(default_factory=list)

    @property
    def mandatory(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcement == "mandatory"]


# -- engine messages from a capture ---------------------------------------------------------------


def load_policy_config(path: Path) -> dict[str, tuple[Enforcement | None, dict[str, Any]]]:
    """A `--policy-pack-config` JSON file: policy -> level, or {enforcementLevel?, props...}."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, json.JSONDecodeError) as error:
        raise UserError(
            "--policy-config", str(path), f"cannot be read as JSON ({error})", "pass a JSON object"
        ) from None
    if not isinstance(raw, dict):
        raise UserError("--policy-config", str(path), "is not a JSON object", "map policy names to config")
    parsed: dict[str, tuple[Enforcement | None, dict[str, Any]]] = {}
    for policy, value in raw.items():
        props = dict(value) if isinstance(value, dict) else {}
        level = value if isinstance(value, str) else props.pop("enforcementLevel", None)
        if not isinstance(value, (str, dict)) or level is not None and level not in _LEVEL_VALUES:
            raise UserError(
                f"--policy-config {policy}",
                value,
                "is not an enforcement level or object",
                f"use one of {', '.join(_LEVEL_VALUES)}",
            )
        parsed[policy] = (level, props)
    return parsed


def reconcile_config(
    info: analyzer_pb2.AnalyzerInfo, user: dict[str, tuple[Enforcement | None, dict[str, Any]]] | None = None
) -> analyzer_pb2.ConfigureAnalyzerRequest:
    """Schema defaults, then the pack's initial config, then the user's file; validated per policy."""
    result: dict[str, tuple[Enforcement | None, dict[str, Any]]] = {}
    schemas: dict[str, dict[str, Any]] = {}
    for policy in info.policies:
        properties = json_format.MessageToDict(policy.configSchema.properties)
        schemas[policy.name] = {
            "type": "object",
            "properties": {**properties, "enforcementLevel": {"type": "string", "enum": list(_LEVEL_VALUES)}},
            **({"required": list(policy.configSchema.required)} if policy.configSchema.required else {}),
        }
        defaults = {k: v["default"] for k, v in properties.items() if isinstance(v, dict) and "default" in v}
        result[policy.name] = (_LEVELS[policy.enforcementLevel], defaults)
    # An initial-config entry always carries a level on the wire (0 = advisory), as the engine reads it.
    initial = {
        name: (_LEVELS[entry.enforcementLevel], json_format.MessageToDict(entry.properties))
        for name, entry in info.initialConfig.items()
    }
    for layer in (initial, user or {}):
        if "all" in layer and layer["all"][0] is not None:
            result = {name: (layer["all"][0], props) for name, (_, props) in result.items()}
        for name, (level, props) in layer.items():
            old_level, old_props = result.get(name, (None, {}))
            result[name] = (level or old_level, {**old_props, **props})
    problems = []
    for name, schema in schemas.items():
        validator = jsonschema.Draft7Validator(schema)
        problems += [f"{name}: {error.message}" for error in validator.iter_errors(result[name][1])]
    if problems:
        raise UserError(
            "policy config", "; ".join(problems), "does not match the pack's config schema", "fix the values"
        )
    return analyzer_pb2.ConfigureAnalyzerRequest(
        policyConfig={
            name: analyzer_pb2.PolicyConfig(
                enforcementLevel=_LEVEL_VALUES[level or "advisory"], properties=dict_to_struct(props)
            )
            for name, (level, props) in result.items()
        }
    )


# -- driving the protocol -------------------------------------------------------------------------

Call = Callable[[str, Message], Any]


def _drive(call: Call, capture: Capture, user_config: dict | None, version: str) -> PolicyResult:
    info = begin(call, user_config, capture.config, capture.preview)
    by_urn = capture.by_urn()
    violations: list[Violation] = []
    for record in capture.sorted_resources():
        if not record.read:  # as the streamed path (policy_stream.py): a read is not analysed
            violations += analyzed(call, analyze_request(record, capture.config, by_urn))
    return verdict(call, info, capture, violations, version)


def begin(call: Call, user_config: dict | None, config: StackConfig, preview: bool) -> Any:
    """GetAnalyzerInfo, Configure with the reconciled policy config, ConfigureStack: the pack's info."""
    info = call("GetAnalyzerInfo", empty_pb2.Empty())
    call("Configure", reconcile_config(info, user_config))
    configure_stack(call, config, preview)
    return info


def configure_stack(call: Call, config: StackConfig, preview: bool) -> None:
    stack_config = analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=config.stack,
        project=config.project,
        organization="organization",
        dry_run=preview,
        config=dict(config.values),
        config_secret_keys=sorted(config.secret_keys),
    )
    call("ConfigureStack", stack_config)


def analyzed(call: Call, request: analyzer_pb2.AnalyzeRequest) -> list[Violation]:
    """One registration's violations (a diagnostic without a URN is the resource's)."""
    return [_violation(diag, default_urn=request.urn) for diag in call("Analyze", request).diagnostics]


def verdict(call: Call, info: Any, capture: Capture, violations: list[Violation], version: str) -> PolicyResult:
    """AnalyzeStack over the finished run, then every violation in one order (policy, URN, message)."""
    violations = violations + [
        _violation(diag, default_urn=None) for diag in call("AnalyzeStack", analyze_stack_request(capture)).diagnostics
    ]
    violations.sort(key=lambda v: (v.policy, v.urn or "", v.message))
    return PolicyResult(info.name, violations, version or info.version, sorted(p.name for p in info.policies))


def _violation(diag: analyzer_pb2.AnalyzeDiagnostic, *, default_urn: str | None) -> Violation:
    return Violation(
        diag.policyName, _LEVELS.get(diag.enforcementLevel, "advisory"), diag.urn or default_urn, diag.message
    )


def _pack_environment(capture: Capture) -> dict[str, str]:
    return pack_environment(capture.project, capture.stack, dict(capture.config.values), capture.preview)


def _pack_meta(pack_dir: Path) -> dict[str, Any]:
    try:
        meta = yaml.safe_load((pack_dir / "PulumiPolicy.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        meta = {}
    return meta if isinstance(meta, dict) else {}


def _pack_version(pack_dir: Path) -> str:
    """PulumiPolicy.yaml's version, which the CLI prefers over what the pack reports."""
    return str(_pack_meta(pack_dir).get("version") or "")


def _pack_python(pack_dir: Path) -> str:
    """The pack's configured virtualenv if it has one (as the CLI picks it), else this interpreter."""
    meta = _pack_meta(pack_dir)
    runtime = meta.get("runtime")
    venv = runtime.get("options", {}).get("virtualenv") if isinstance(runtime, dict) else None
    if venv:
        # Not resolve(): the venv's python is a symlink, and only its own path makes it the venv's.
        candidate = os.path.abspath(pack_dir / venv / "bin" / "python")
        if os.path.isfile(candidate):
            return candidate
    return sys.executable


def _check_pack(pack_dir: Path) -> Path:
    pack_dir = Path(pack_dir).resolve()
    if not (pack_dir / "PulumiPolicy.yaml").is_file() or not (pack_dir / "__main__.py").is_file():
        raise UserError(
            "--policy-pack", str(pack_dir), "is not a Python policy pack", "it needs PulumiPolicy.yaml and __main__.py"
        )
    return pack_dir


def _drain(stream: Any, sink: queue.Queue[str] | None, tail: list[str]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        if sink is not None:
            sink.put(line)
        tail.append(line)
        del tail[:-40]


class PackServer:
    """A policy pack process started the way the CLI starts it (`python <pack dir>`).

    Start it early: the process boots (imports the SDK and the pack) on the other core while the
    program runs under mocks, and `analyze` then only waits for a port that is usually there.
    """

    def __init__(self, pack_dir: Path, environment: dict[str, str]) -> None:
        self.pack_dir = _check_pack(pack_dir)
        self.process = subprocess.Popen(
            [_pack_python(self.pack_dir), "-u", str(self.pack_dir)],
            cwd=self.pack_dir,
            env={**os.environ, **environment},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.err_tail: list[str] = []
        self.port: int | None = None
        self.drains = [
            threading.Thread(target=_drain, args=(self.process.stdout, self.lines, []), daemon=True),
            threading.Thread(target=_drain, args=(self.process.stderr, None, self.err_tail), daemon=True),
        ]
        for drain in self.drains:
            drain.start()

    def analyze(self, capture: Capture, user_config: dict | None) -> PolicyResult:
        with self.session() as call:
            return _drive(call, capture, user_config, self.version)

    @property
    def version(self) -> str:
        return _pack_version(self.pack_dir)

    @contextmanager
    def session(self) -> Iterator[Call]:
        """A channel to the pack, as `call(method, request)`; closed after."""
        channel = None
        try:
            if self.port is None:  # the pack prints its port once; later analyses (other stacks) reuse it
                self.port = _read_port(self.process, self.lines, self.err_tail, self.drains)
            port = self.port
            channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=_GRPC_OPTIONS)
            # Each call waits for the channel itself (wait_for_ready): `channel_ready_future` would leave a
            # connectivity poller that `close()` then waits ~0.2 s for.
            stub = analyzer_pb2_grpc.AnalyzerStub(channel)
            pack_name = self.pack_dir.name

            def call(method: str, request: Message) -> Any:
                try:
                    return getattr(stub, method)(request, timeout=_START_TIMEOUT, wait_for_ready=True)
                except grpc.RpcError as error:
                    if method == "ConfigureStack" and error.code() == grpc.StatusCode.UNIMPLEMENTED:
                        return None
                    raise PolicyError(f"policy pack {pack_name}: {method} failed: {error.details()}") from None

            yield call
        finally:
            if channel is not None:
                channel.close()

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def pack_environment(project: str, stack: str, values: dict[str, str], preview: bool) -> dict[str, str]:
    """The variables the engine gives a policy pack process (constructEnv)."""
    return {
        "PULUMI_CONFIG": json.dumps(values),
        "PULUMI_ORGANIZATION": "organization",
        "PULUMI_PROJECT": project,
        "PULUMI_STACK": stack,
        "PULUMI_DRY_RUN": "true" if preview else "false",
    }


def _run_subprocess(pack_dir: Path, capture: Capture, user_config: dict | None) -> PolicyResult:
    server = PackServer(pack_dir, _pack_environment(capture))
    try:
        return server.analyze(capture, user_config)
    finally:
        server.close()


def _read_port(
    process: subprocess.Popen, lines: queue.Queue[str], err_tail: list[str], drains: list[threading.Thread]
) -> int:
    """The first integer line on stdout, as the CLI reads it; a pack that exits first is an error."""
    deadline_checks = int(_START_TIMEOUT / 0.1)
    for _ in range(deadline_checks):
        try:
            line = lines.get(timeout=0.1).strip()
        except queue.Empty:
            if process.poll() is not None:
                for drain in drains:
                    drain.join(timeout=2)
                reason = "".join(err_tail).strip().splitlines()
                raise PolicyError(
                    f"policy pack exited with code {process.returncode} before serving: "
                    + (reason[-1] if reason else "no output")
                ) from None
            continue
        if line.isdigit():
            return int(line)
    raise PolicyError(f"policy pack printed no port within {_START_TIMEOUT:.0f}s")


class _PackConstructed(Exception):
    """Stops the pack's `__main__` where a real PolicyPack would start serving forever."""


_INTERCEPT_LOCK = threading.Lock()


def load_pack_servicer(pack_dir: Path) -> Any:
    """pulumi-policy's analyzer servicer for a pack, built from its `__main__.py` without serving."""
    from unittest import mock  # only here: the default transport (a pack process) never loads unittest

    import pulumi_policy
    from pulumi_policy.policy import EnforcementLevel, _PolicyAnalyzerServicer

    pack_dir = _check_pack(pack_dir)
    signature = inspect.signature(pulumi_policy.PolicyPack.__init__)
    captured: dict[str, Any] = {}

    def intercept(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        captured.update({k: v for k, v in bound.arguments.items() if k != "self"})
        raise _PackConstructed()

    # mock.patch.object swaps the constructor for this run and puts the original back on any exit.
    with (
        _INTERCEPT_LOCK,
        isolated_imports([pack_dir], cwd=pack_dir),
        mock.patch.object(pulumi_policy.PolicyPack, "__init__", intercept),
    ):
        try:
            runpy.run_path(str(pack_dir), run_name="__main__")
        except _PackConstructed:
            pass
    if not captured:
        raise PolicyError(f"policy pack {pack_dir.name}: __main__.py never constructs a PolicyPack")
    return _PolicyAnalyzerServicer(
        captured["name"],
        "0.0.1",  # what PolicyPack reports; PulumiPolicy.yaml's version wins in the CLI
        captured["policies"],
        captured.get("enforcement_level") or EnforcementLevel.ADVISORY,
        captured.get("initial_config"),
        captured.get("description"),
        captured.get("display_name"),
        captured.get("readme"),
        captured.get("provider"),
        captured.get("tags"),
        captured.get("repository"),
    )


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _run_in_process(pack_dir: Path, capture: Capture, user_config: dict | None) -> PolicyResult:
    servicer = load_pack_servicer(pack_dir)

    def drive() -> PolicyResult:
        from pulumi.runtime import config as runtime_config

        runtime_config.CONFIG.set({})  # the servicer writes PULUMI_CONFIG here: keep it in this context
        return _drive(
            lambda method, request: getattr(servicer, method)(request, None),
            capture,
            user_config,
            _pack_version(pack_dir),
        )

    with _environment(_pack_environment(capture)), isolated_imports([pack_dir], cwd=pack_dir):
        return contextvars.copy_context().run(drive)


def run_policy_pack(
    pack_dir: Path,
    capture: Capture,
    *,
    config_file: Path | None = None,
    user_config: dict[str, tuple[Enforcement | None, dict[str, Any]]] | None = None,
    transport: Transport = "subprocess",
    server: PackServer | None = None,
) -> PolicyResult:
    """Analyze every registration of `capture` with the pack; see the module docstring.

    The policy config is `config_file`, read here, or `user_config`, already read (`load_policy_config`). With
    `server` (a pack process started earlier), the subprocess transport uses it.
    """
    pack_dir = _check_pack(pack_dir)
    if config_file is not None:
        user_config = load_policy_config(Path(config_file))
    if transport == "subprocess" and server is not None:
        return server.analyze(capture, user_config)
    if transport == "subprocess":
        return _run_subprocess(pack_dir, capture, user_config)
    if transport == "in-process":
        return _run_in_process(pack_dir, capture, user_config)
    raise ValueError(f"unknown policy transport {transport!r}")
