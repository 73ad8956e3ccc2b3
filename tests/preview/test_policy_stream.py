"""The streamed analysis (tpu_stacks_preview/policy_stream.py) tells the pack what the batch path tells it: the same
configuration first, each registration's request, the stack's last; a run the engine starts again voids what it
registered before (the stack's config sent again, the earlier violations dropped); an abandoned run sends nothing
more. Against a real pack process: the verdict of a shipped stack's preview is the batch path's, violation for
violation."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pulumi.runtime.proto import analyzer_pb2

from tests.shipped import ROOT, shipped
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import StackConfig
from tpu_stacks_preview.policy import PackServer, pack_environment, run_policy_pack
from tpu_stacks_preview.policy_stream import StreamedAnalysis


class _Pack:
    """Answers in memory; each Analyze of a resource named `bad...` reports one violation."""

    version = "1"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        def call(method: str, request: Any) -> Any:
            self.calls.append((method, request))
            if method == "GetAnalyzerInfo":
                return analyzer_pb2.AnalyzerInfo(name="fake", version="1")
            diagnostics = []
            if method == "Analyze" and request.name.startswith("bad"):
                diagnostics = [analyzer_pb2.AnalyzeDiagnostic(policyName="p", message=f"{request.name} is bad")]
            return analyzer_pb2.AnalyzeResponse(diagnostics=diagnostics)

        yield call

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]


def _preview() -> Capture:
    return shipped("dev", preview=True)


def _with_secret(config: StackConfig) -> StackConfig:
    return config.with_placeholder("tpu-stacks:another")


def test_a_restarted_run_voids_what_it_registered_before():
    capture, pack = _preview(), _Pack()
    records = {r.urn: r for r in capture.resources}
    first, second = capture.resources[0], capture.resources[1]
    stream = StreamedAnalysis(pack, capture.config, None)  # type: ignore[arg-type]
    bad = type(first)(**{**first.__dict__, "name": "bad-first"})
    stream.registered(bad, capture.config, records)
    filled = _with_secret(capture.config)
    stream.restarted(filled)
    stream.registered(second, filled, records)
    stream.finish(capture)
    result = stream.result()
    assert result is not None and result.violations == []  # the voided run's violation is gone
    assert pack.methods() == [
        "GetAnalyzerInfo",
        "Configure",
        "ConfigureStack",
        "Analyze",
        "ConfigureStack",
        "Analyze",
        "AnalyzeStack",
    ]
    configured = [request for method, request in pack.calls if method == "ConfigureStack"]
    assert [c.dry_run for c in configured] == [True, True]
    assert "tpu-stacks:another" in configured[1].config and "tpu-stacks:another" not in configured[0].config


def test_an_abandoned_run_sends_nothing_more_and_gives_no_verdict():
    capture, pack = _preview(), _Pack()
    stream = StreamedAnalysis(pack, capture.config, None)  # type: ignore[arg-type]
    stream.registered(capture.resources[0], capture.config, {})
    stream.abandon()
    stream.registered(capture.resources[1], capture.config, {})  # told after: never sent
    assert stream.result() is None
    assert pack.methods() == ["GetAnalyzerInfo", "Configure", "ConfigureStack", "Analyze"]


def test_a_violation_from_a_streamed_request_is_the_resources():
    capture, pack = _preview(), _Pack()
    record = capture.resources[0]
    stream = StreamedAnalysis(pack, capture.config, None)  # type: ignore[arg-type]
    stream.registered(type(record)(**{**record.__dict__, "name": "bad-one"}), capture.config, {})
    stream.finish(capture)
    result = stream.result()
    assert [(v.policy, v.urn, v.message) for v in result.violations] == [("p", record.urn, "bad-one is bad")]


def test_a_real_pack_gives_the_batch_verdict_for_a_streamed_preview():
    """Every registration of the `vllm-gateway` preview streamed in registration order to the repository's pack in a
    process of its own, against the same pack judging the finished preview in URN order."""
    capture = shipped("vllm-gateway", preview=True)
    pack_dir = ROOT / "policies"
    server = PackServer(pack_dir, pack_environment(capture.project, capture.stack, dict(capture.config.values), True))
    try:
        stream = StreamedAnalysis(server, capture.config, None)
        seen: dict[str, Any] = {}
        for record in capture.resources:  # registration order, each with what was registered before it
            seen[record.urn] = record
            stream.registered(record, capture.config, dict(seen))
        stream.finish(capture)
        streamed = stream.result()
        batch = run_policy_pack(Path(pack_dir), capture, server=server)
    finally:
        server.close()
    assert streamed is not None and streamed.violations  # the stack's advisories: something to compare
    assert streamed == batch


def test_a_read_is_not_analysed_either_way():
    """The engine analyses the resources a program registers, not those it reads (`Resource.get`; policy_stream.py):
    the monitor does not tell the stream of a read, and the batch path sends it no AnalyzeRequest; the stack's
    request still lists it among the stack's resources."""
    from pulumi.runtime.proto import resource_pb2

    from tpu_stacks_preview.analyze_requests import analyze_requests
    from tpu_stacks_preview.config import load_stack_config
    from tpu_stacks_preview.mocks import OfflineMocks
    from tpu_stacks_preview.monitor import CaptureMonitor

    from .conftest import RAW

    config = load_stack_config(RAW, "dev", placeholder_secrets=True)
    heard: list[str] = []

    class Listener:
        def registered(self, record: Any, config: Any, records: Any) -> None:
            heard.append(record.urn)

        def restarted(self, config: Any) -> None:
            pass

    monitor = CaptureMonitor(OfflineMocks(config, preview=True), config, Listener())  # type: ignore[arg-type]
    read = monitor.ReadResource(resource_pb2.ReadResourceRequest(type="gcp:storage/bucket:Bucket", name="old", id="b"))
    registered = monitor.RegisterResource(
        resource_pb2.RegisterResourceRequest(type="gcp:storage/bucket:Bucket", name="new", custom=True)
    )
    assert heard == [registered.urn]
    capture = Capture(config=config, preview=True)
    capture.resources = list(monitor.records.values())
    requests, stack = analyze_requests(capture)
    assert [r.urn for r in requests] == [registered.urn]
    assert {r.urn for r in stack.resources} == {read.urn, registered.urn}


def test_the_engine_tells_the_stream_of_a_run_it_starts_again(tmp_path: Path):
    """A program that stops on a secret no stack file gives is run again with a placeholder (engine.py): the stream
    hears of the restart and judges the second run alone, so what the first registered is not counted twice."""
    from tpu_stacks_preview.config import load_stack_config
    from tpu_stacks_preview.engine import run_program

    (tmp_path / "Pulumi.yaml").write_text("name: restart-fixture\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\nfrom pulumi_gcp import storage\n\n"
        'storage.Bucket("bad", location="US")\n'
        'pulumi.Config("other").require_secret("token")  # stops the first run\n'
        'storage.Bucket("good", location="US")\n'
    )
    config = load_stack_config(tmp_path, "dev", placeholder_secrets=True)
    pack = _Pack()
    stream = StreamedAnalysis(pack, config, None)  # type: ignore[arg-type]
    capture = run_program(tmp_path, "dev", preview=True, config=config, listener=stream)
    assert capture.error is None
    stream.finish(capture)
    result = stream.result()
    assert result is not None and [v.message for v in result.violations] == ["bad is bad"]
    assert pack.methods().count("ConfigureStack") == 2  # the first run's, and the second's with its placeholder
    analysed = [request.name for method, request in pack.calls if method == "Analyze"]
    assert analysed.count("bad") == 2 and analysed.count("good") == 1
