"""`tpu-stacks plan --stack NAME [--stack NAME ...] | --all`: an offline `pulumi preview` with schema and
policy gates, for one stack or several in one process (sharing the imports and the policy pack).

The program runs twice under mocks: in preview mode (what `pulumi preview` and therefore the
policy pack see, computed values unknown) and in up mode (computed values filled, so Kubernetes
objects are complete for rendering and strict schema validation); a policy pack process judges the
preview while the up run and the validation go on. Exit 0 when clean, 1 on a
program error, a schema problem or a mandatory policy violation, 2 on the user's input error.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tpu_stacks.errors import UserError
from tpu_stacks_preview.capture import Capture
from tpu_stacks_preview.config import StackConfig, check_python_program, load_stack_config
from tpu_stacks_preview.diagram import check_extension
from tpu_stacks_preview.diagram import render as render_diagram
from tpu_stacks_preview.engine import run_program
from tpu_stacks_preview.manifests import render_manifests, write_manifests
from tpu_stacks_preview.monitor import RunListener
from tpu_stacks_preview.monitoring import check_monitoring
from tpu_stacks_preview.policy import (
    PackServer,
    PolicyError,
    PolicyResult,
    Transport,
    load_policy_config,
    pack_environment,
    run_policy_pack,
)
from tpu_stacks_preview.policy_stream import StreamedAnalysis
from tpu_stacks_preview.report import (
    StackRow,
    plan_document,
    render_brief,
    render_text,
    secrets_note,
    summary_table,
    used_placeholders,
)
from tpu_stacks_preview.schema import DEFAULT_KUBERNETES_VERSION, SchemaReport, bundled_versions, validate_objects

VERSION_KEY = "tpu-stacks:kubernetesVersion"
_SLOW_STEP = 0.3  # seconds before a step announces itself on stderr


def _write(path: Path, text: str) -> None:
    """Write an output file, creating its folder as `--manifests` does (a missing folder is no mistake)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class _Spelled(argparse.Action):
    """Store the value and the spelling the user wrote (`<dest>_flag`), so a message names the flag as written."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_flag", option_string)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument(
        "--stack", action="append", help="stack name: reads Pulumi.<stack>.yaml (repeat it to plan several)"
    )
    chosen.add_argument("--all", action="store_true", help="every Pulumi.<stack>.yaml of the project")
    parser.add_argument("--cwd", default=".", help="the Pulumi project directory (default: .)")
    parser.add_argument("--policy-pack", metavar="DIR", help="run this Python policy pack on the preview")
    parser.add_argument(  # both spellings: Pulumi's own (`pulumi preview --policy-pack-config`) and the short one
        "--policy-config",
        "--policy-pack-config",
        dest="policy_config",
        action=_Spelled,
        metavar="FILE",
        help="policy config JSON, as pulumi preview's --policy-pack-config (either spelling)",
    )
    parser.add_argument(
        "--json", metavar="FILE", help="write the plan as JSON (resources sorted by URN); {stack} names each stack's"
    )
    parser.add_argument(
        "--manifests", metavar="DIR", help="write each Kubernetes object as YAML here; {stack} names each stack's"
    )
    parser.add_argument(
        "--diagram",
        metavar="FILE",
        help="write the resource graph: Mermaid (.md, .mmd) or Graphviz (.dot, .gv); {stack} names each stack's",
    )
    parser.add_argument(
        "--crds", metavar="DIR", help="CRD YAML directory (default: $TPU_STACKS_CRDS or the schemas this package ships)"
    )
    parser.add_argument(
        "--k8s-version",
        metavar="X.Y",
        help=f"Kubernetes minor for schemas (default: stack config {VERSION_KEY}, else {DEFAULT_KUBERNETES_VERSION})",
    )
    parser.add_argument(
        "--in-process-policy", action="store_true", help="run the policy pack in this process instead of over gRPC"
    )
    parser.add_argument(
        "--placeholder-secrets",
        action="store_true",
        help="stand in a marked placeholder for each secret the program requires and the stack does not set",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="with several stacks, print each stack's full report (tree, outputs) instead of what needs attention",
    )


def run(args: argparse.Namespace) -> int:
    """Run the plan; a UserError is reported here too, so callers never see a traceback."""
    try:
        return _plan(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # an output path (--json, --manifests, --diagram) that cannot be written
        where = f" {error.filename}" if error.filename else ""
        print(f"tpu-stacks: cannot write{where}: {error.strerror or error}; choose a writable path", file=sys.stderr)
        return 2


@contextmanager
def _step(label: str) -> Iterator[None]:
    """Announce a step on stderr only when it takes more than a moment, then say how long it took.

    Only on a terminal: in CI logs and scripts, stderr stays for errors (one line each).
    """
    if not sys.stderr.isatty():
        yield
        return
    started = time.perf_counter()
    shown = threading.Event()

    def announce() -> None:
        shown.set()
        print(f"tpu-stacks: {label} ...", file=sys.stderr, flush=True)

    timer = threading.Timer(_SLOW_STEP, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        if shown.is_set():
            print(f"tpu-stacks: {label} done in {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)


def _kubernetes_version(args: argparse.Namespace, config: StackConfig) -> str:
    version = args.k8s_version or config.get(VERSION_KEY) or DEFAULT_KUBERNETES_VERSION
    minor = ".".join(version.lstrip("v").split(".")[:2])
    if minor not in bundled_versions():
        key = "--k8s-version" if args.k8s_version else VERSION_KEY
        known = bundled_versions()
        raise UserError(key, version, "has no bundled Kubernetes schemas", f"use one of {known[0]}..{known[-1]}")
    return minor


def _run(config: StackConfig, *, preview: bool, listener: RunListener | None = None) -> tuple[Capture, int]:
    """The capture and, if the program failed, the exit code: 2 for the user's input, else 1."""
    mode = "preview" if preview else "up"
    with _step(f"running {config.project}/{config.stack} under mocks ({mode} mode)"):
        capture = run_program(config.project_dir, config.stack, preview=preview, config=config, listener=listener)
    if capture.error is None:
        return capture, 0
    if capture.error.kind == "user":
        print(f"tpu-stacks: {capture.error.message}", file=sys.stderr)
        return capture, 2
    print(f"tpu-stacks: the program failed in {mode} mode: {capture.error.message}", file=sys.stderr)
    return capture, 1


def _plan_with(
    args: argparse.Namespace,
    config: StackConfig,
    version: str,
    transport: Transport,
    server: PackServer | None,
    manifests_dir: Path | None,
) -> int | tuple[Capture, Capture, SchemaReport, PolicyResult | None]:
    """Run both modes, render, validate and judge; an int is an early exit code."""
    analysis = _Analysis(args, config, transport, server)  # the pack judges the preview as it is made
    try:
        preview, failed = _run(config, preview=True, listener=analysis.listener)
        analysis.judge(None if failed else preview)
        if failed:
            return failed
        up, failed = _run(config, preview=False)
        if failed:
            return failed

        manifests = render_manifests(up)
        if manifests_dir is not None:
            write_manifests(manifests, manifests_dir)
        with _step(f"validating {len(manifests)} Kubernetes objects against {version} schemas and CRDs"):
            schema = validate_objects(
                manifests,
                kubernetes_version=version,
                crd_dir=Path(args.crds) if args.crds else None,
                project_dir=config.project_dir,
            )
        schema.problems += check_monitoring(up)  # dashboards and alert policies: API schema, catalogued metrics
        if args.policy_pack:
            with _step(f"running policy pack {args.policy_pack} ({transport})"):
                try:
                    policy = analysis.result()
                except PolicyError as error:
                    print(f"tpu-stacks: {error}", file=sys.stderr)
                    return 1
        else:
            policy = None
        return preview, up, schema, policy
    finally:
        analysis.close()  # a pack process several stacks share analyses one stack at a time


class _Analysis:
    """The policy pack's verdict on the preview.

    Over gRPC (a pack process started earlier) the pack judges each resource as the preview registers it and the
    stack once the preview ends, as the engine asks it (policy_stream.py): it works in its own process on the other
    core while this one runs the program (preview, then up) and validates, and its thread only waits on the pack's
    answers. In process, the pack would run Python on this process's interpreter: it runs when its result is asked
    for, after the preview, as before. Nothing is started without `--policy-pack`.
    """

    def __init__(
        self, args: argparse.Namespace, config: StackConfig, transport: Transport, server: PackServer | None
    ) -> None:
        self._run: Callable[[Capture], PolicyResult] | None = None
        self._stream: StreamedAnalysis | None = None
        self._preview: Capture | None = None
        self._judged = False
        if args.policy_pack:
            # Resolved and read here, in the calling thread: the runs move the working directory and the import
            # path while the analysis runs (isolated_imports), and a bad config file is the user's error as written.
            user_config = load_policy_config(Path(args.policy_config)) if args.policy_config else None
            if server is not None:  # a pack process started earlier (`_plan`, over gRPC)
                self._stream = StreamedAnalysis(server, config, user_config)
            else:
                pack_dir = Path(args.policy_pack).resolve()
                self._run = lambda preview: run_policy_pack(
                    pack_dir, preview, user_config=user_config, transport=transport
                )

    @property
    def listener(self) -> StreamedAnalysis | None:
        """What the preview run tells of each registration."""
        return self._stream

    def judge(self, preview: Capture | None) -> None:
        """The preview ended (None: it failed, and nothing more is judged)."""
        self._preview, self._judged = preview, True
        if self._stream is not None:
            if preview is None:
                self._stream.abandon()
            else:
                self._stream.finish(preview)

    def close(self) -> None:
        """Wait for the pack to be done with this stack; a preview that never ended (it raised) is abandoned."""
        if self._stream is not None:
            if not self._judged:
                self._stream.abandon()
            self._stream.wait()

    def result(self) -> PolicyResult | None:
        """The verdict (raising what the analysis raised: a PolicyError)."""
        if self._stream is not None:
            return self._stream.result()
        if self._run is None or self._preview is None:
            return None
        return self._run(self._preview)


def _stacks(args: argparse.Namespace, project_dir: Path) -> list[str]:
    if not args.all:
        return list(dict.fromkeys(args.stack))
    found = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in project_dir.glob("Pulumi.*.yaml"))
    if not found:
        raise UserError("--all", str(project_dir), "has no Pulumi.<stack>.yaml", "create a stack file or use --stack")
    return found


def _per_stack(flag: str, value: str | None, stacks: list[str]) -> None:
    if value and len(stacks) > 1 and "{stack}" not in value:
        raise UserError(
            flag, value, f"would hold {len(stacks)} stacks' output", "put {stack} in it, e.g. plan-{stack}.json"
        )


def _plan(args: argparse.Namespace) -> int:
    if args.policy_config and not args.policy_pack:
        flag = getattr(args, "policy_config_flag", None) or "--policy-config"
        raise UserError(flag, args.policy_config, "needs --policy-pack", "name the pack it configures")
    project_dir = Path(args.cwd)
    check_python_program(project_dir)  # a YAML program: say who plans it before looking for its stacks
    stacks = _stacks(args, project_dir)
    _per_stack("--json", args.json, stacks)
    _per_stack("--manifests", args.manifests, stacks)
    _per_stack("--diagram", args.diagram, stacks)
    if args.diagram:
        check_extension(args.diagram)
    # every stack file read before any run
    configs = [load_stack_config(project_dir, s, placeholder_secrets=args.placeholder_secrets) for s in stacks]
    versions = [_kubernetes_version(args, config) for config in configs]

    # The pack process boots on the other core while the program runs (what the CLI does too); several
    # stacks share it: each analysis sends its own stack and config (ConfigureStack).
    transport: Transport = "in-process" if args.in_process_policy else "subprocess"
    server = None
    if args.policy_pack and transport == "subprocess":
        first = configs[0]
        server = PackServer(
            Path(args.policy_pack), pack_environment(first.project, first.stack, dict(first.values), True)
        )
    brief = len(configs) > 1 and not args.verbose
    try:
        rows = [
            _plan_one(args, config, version, transport, server, brief=brief)
            for config, version in zip(configs, versions, strict=True)
        ]
    finally:
        if server is not None:
            server.close()
    if len(rows) > 1:
        print(summary_table(rows, policy=bool(args.policy_pack)))
    return max(row.code for row in rows)


def _plan_one(
    args: argparse.Namespace,
    config: StackConfig,
    version: str,
    transport: Transport,
    server: PackServer | None,
    *,
    brief: bool = False,
) -> StackRow:
    """Plan one stack: print it (in `brief`, only what needs attention), write its files; its summary row."""
    named = {"stack": config.stack}
    manifests_dir = Path(args.manifests.format(**named)) if args.manifests else None
    result = _plan_with(args, config, version, transport, server, manifests_dir)
    if isinstance(result, int):
        if brief:
            print(f"{config.project}/{config.stack}: did not plan (exit {result}; the reason is on stderr)")
        return StackRow(config.stack, result)
    preview, up, schema, policy = result
    note = secrets_note(up.config, used_placeholders(up.config, up))  # with the secrets the run filled
    if brief:
        print(render_brief(preview, up, schema, policy, note))
    else:
        print(
            "\n".join(
                [note, render_text(preview, up, schema, policy)] if note else [render_text(preview, up, schema, policy)]
            )
        )
    if args.diagram:
        target = Path(args.diagram.format(**named))
        _write(target, render_diagram(up, target))
    if args.json:
        document = plan_document(preview, up, schema, policy)
        _write(Path(args.json.format(**named)), json.dumps(document, indent=2, sort_keys=True) + "\n")

    failures = []
    if schema.problems:
        failures.append(f"{len(schema.problems)} schema problem(s)")
    if policy is not None and policy.mandatory:
        failures.append(f"{len(policy.mandatory)} mandatory policy violation(s)")
    if failures:
        print(f"tpu-stacks: plan failed: {', '.join(failures)} (stack {config.stack})", file=sys.stderr)
    return StackRow(
        config.stack,
        1 if failures else 0,
        len(up.resources),
        len(schema.problems),
        len(policy.mandatory) if policy else 0,
        len(policy.violations) - len(policy.mandatory) if policy else 0,
    )
