"""What `tpu-stacks plan` prints and writes: the text report, the brief lines and summary table of several
stacks, the secrets note, the "before you run up" block, and the plan document (JSON). Pure rendering of
captures already taken: the block's figures are the workload components' own records (tpu_stacks/first_up.py)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tpu_stacks.catalog.capacity import KIND_FACTS
from tpu_stacks.first_up import OUTPUT as FIRST_UP
from tpu_stacks_preview.capture import Capture, ResourceRecord
from tpu_stacks_preview.config import StackConfig, secret_placeholder
from tpu_stacks_preview.manifests import is_kubernetes_object
from tpu_stacks_preview.policy import PolicyResult
from tpu_stacks_preview.schema import SchemaReport


@dataclass(frozen=True)
class StackRow:
    """One stack's line of the summary table (`plan` with several stacks)."""

    stack: str
    code: int
    resources: int | None = None
    schema_problems: int = 0
    mandatory: int = 0
    advisory: int = 0

    @property
    def result(self) -> str:
        if self.resources is None:
            return f"error (exit {self.code})"
        return "FAIL" if self.code else "ok"


def summary_table(rows: list[StackRow], *, policy: bool) -> str:
    """The table that ends a several-stack plan: one line per stack, then the totals."""
    header = ("stack", "resources", "schema problems", "mandatory", "advisory", "result")
    cells = [
        (r.stack, "-" if r.resources is None else str(r.resources), str(r.schema_problems),
         str(r.mandatory) if policy else "-", str(r.advisory) if policy else "-", r.result)
        for r in rows
    ]  # fmt: skip
    widths = [max(len(row[i]) for row in [header, *cells]) for i in range(len(header))]
    line = "  ".join
    out = ["", "Summary:" + ("" if policy else " (no --policy-pack: no policy columns)")]
    out += [line(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in [header, *cells]]
    failed = [r.stack for r in rows if r.code]
    out.append(
        f"{len(rows) - len(failed)} of {len(rows)} stacks ok" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return "\n".join(out)


def used_placeholders(config: StackConfig, up: Capture) -> tuple[str, ...]:
    """The placeholder secrets the program put into a resource (a Secret, an env var): only those are worth a
    line. The program reads every declared secret, but a stack with an open model and no API key declares no
    resource with them, so their stand-ins never reach the wire."""
    wire = "\n".join(record.raw_inputs.SerializeToString(deterministic=True).decode("utf-8", "replace")
                     for record in up.resources)  # fmt: skip
    return tuple(key for key in config.placeholders if secret_placeholder(key) in wire)


def secrets_note(config: StackConfig, used: tuple[str, ...] | None = None) -> str:
    """One line when secrets stand in as placeholders: which (of those the stack `used`, default all), and why
    (the flag or an ESC environment)."""
    shown = config.placeholders if used is None else used
    if not shown:
        return ""
    keys = ", ".join(shown)
    are, them = ("is a placeholder", "it") if len(shown) == 1 else ("are placeholders", "them")
    if config.environments:
        return (
            f"Secrets: {keys} {are} offline: ESC environment {', '.join(config.environments)} "
            f"may provide {them} and is not opened here"
        )
    return f"Secrets: {keys} {are} (--placeholder-secrets); set {them} with pulumi config set --secret"


def plan_document(preview: Capture, up: Capture, schema: SchemaReport, policy: PolicyResult | None) -> dict[str, Any]:
    """The --json document: up-mode inputs (complete objects), preview outputs (what is known), and per
    resource the options the engine receives (dependsOn, dependencies, ignoreChanges, customTimeouts,
    protect, retainOnDelete, deleteBeforeReplace, replaceOnChanges): what decides a second `up`'s diff,
    how long the first one waits and what `destroy` keeps; `before_up`: each workload's first-`up` record."""
    document: dict[str, Any] = {
        "project": up.project,
        "stack": up.stack,
        "resources": [
            {
                "urn": r.urn,
                "type": r.type,
                "name": r.name,
                "parent": r.parent,
                "custom": r.custom,
                "provider": r.provider,
                "inputs": r.inputs,
                "options": r.options_document(),
            }
            for r in up.sorted_resources()
        ],
        "outputs": preview.stack_outputs,
        "before_up": before_up(up),
        "schema": {
            "problems": [{"object": p.object_id, "path": p.path, "message": p.message} for p in schema.problems]
        },
    }
    if policy is not None:
        document["policy"] = {
            "pack": policy.pack,
            "violations": [
                {"policy": v.policy, "enforcement": v.enforcement, "urn": v.urn, "message": v.message}
                for v in policy.violations
            ],
        }
    return document


def before_up(capture: Capture) -> list[dict[str, Any]]:
    """Each workload component's first-`up` record (its `first_up` output), in URN order: its waits, the TPU
    slices it starts, the TPU hours before it serves and their price, the traffic model's choice."""
    return [
        {"component": record.name, **record.outputs[FIRST_UP]}
        for record in capture.sorted_resources()
        if not record.custom and isinstance(record.outputs, dict) and isinstance(record.outputs.get(FIRST_UP), dict)
    ]


def _money(value: float) -> str:
    return f"${value:,.2f}"


def wait_text(wait: dict[str, Any]) -> str:
    parts = " + ".join(f"{what} {minutes}" for what, minutes in wait["parts"])
    return f"{wait['resource']} {wait['minutes']}m" + (f" ({parts})" if parts else "")


def prices_text(record: dict[str, Any], *, sources: bool = True) -> str:
    shown = []
    for price in record["prices"]:
        kind = _kind(price["kind"])
        if price["usd"] is None:
            shown.append(f"{kind}: no catalogued price")
            continue
        rate = f"{_money(price['usd_per_chip_hour'])}/chip-hour" + (f", {price['source']}" if sources else "")
        shown.append(f"{_money(price['usd'])} {kind}" + ("" if price["listed"] else " list price") + f" ({rate})")
    return "; ".join(shown)


def _kind(name: str) -> str:
    facts = KIND_FACTS.get(name)  # type: ignore[call-overload]
    return facts.label if facts else name


def _slo_line(slo: dict[str, Any], tpu: dict[str, Any]) -> str:
    figures = [
        f"{slo['replicas']} x {tpu['generation']} {tpu['topology']} carry {slo['output_tokens_per_second']:.0f} "
        f"output tokens/s ({slo['replica_output_tokens_per_second']:.0f} each)"
    ]
    figures += [f"NTPOT {slo['ntpot_ms']:.1f} ms"] if slo["ntpot_ms"] is not None else []
    figures += [f"TTFT {slo['ttft_ms']:.1f} ms"] if slo["ttft_ms"] is not None else []
    figures += [f"TTFT p99 {slo['ttft_p99_ms']:.1f} ms"] if slo.get("ttft_p99_ms") is not None else []
    if slo["usd_per_hour"] is not None:
        figures.append(f"{_money(slo['usd_per_hour'])}/h {slo['pricing']}")
    if slo["usd_per_million_output_tokens"] is not None:
        figures.append(f"{_money(slo['usd_per_million_output_tokens'])}/M output tokens")
    return f"slo ({slo['basis']}): " + ", ".join(figures)


def before_up_lines(record: dict[str, Any]) -> list[str]:
    """One workload's "before you run up" block: the waits in order, the TPU slices, the TPU hours and money
    before it serves, the stack's assumptions, the traffic model's choice."""
    tpu, waits, ready = record["tpu"], record["waits"], record["ready"]
    asking = [w["resource"] for w in waits if w["tpu"]]
    when = (
        "from 0 nodes: none before " + " and ".join(asking) + " asks"
        if tpu["from_zero"]
        else "nodes from the pool's creation, with the cluster"
    )
    during = record["tpu_during_download"]
    download = {None: "", True: "; TPU nodes exist during the download", False: "; none during the download"}[during]
    chips = f"{tpu['total_chips']} chip{'s' if tpu['total_chips'] != 1 else ''}"
    out = [
        f"Before you run up ({record['component']}, budgets, so at most):",
        f"  waits in turn: {', '.join(wait_text(w) for w in waits)} = {record['total_minutes']}m after the cluster",
        f"  TPU: {tpu['count']} x {tpu['generation']} {tpu['topology']} ({chips} on {tpu['total_hosts']} "
        f"host{'s' if tpu['total_hosts'] != 1 else ''}), {'/'.join(_kind(k) for k in tpu['kinds'])}; {when}{download}",
        f"  TPU before {ready}: {chips} x {record['tpu_minutes_before_serving']}m = "
        f"{record['chip_hours_before_serving']:g} chip-hours: {prices_text(record)}",
    ]
    out += [f"  {note}" for note in record["notes"]]
    out += [f"  {_slo_line(record['slo'], tpu)}"] if record["slo"] else []
    return out


def _brief_before_up(record: dict[str, Any]) -> str:
    known = [p for p in record["prices"] if p["usd"] is not None]
    money = f" ({_money(known[0]['usd'])} {_kind(known[0]['kind'])})" if known else ""
    return (
        f"  before up: waits up to {record['total_minutes']}m; TPU before {record['ready']} "
        f"{record['chip_hours_before_serving']:g} chip-hours{money}"
    )


def _provider_name(record: ResourceRecord) -> str:
    if not record.provider:
        return ""
    return record.provider.rsplit("::", 1)[0].rsplit("::", 1)[-1]


def _tree(capture: Capture) -> list[str]:
    children: dict[str | None, list[ResourceRecord]] = {}
    for record in capture.resources:
        children.setdefault(record.parent, []).append(record)
    lines: list[str] = []

    def walk(parent: str | None, depth: int) -> None:
        for record in sorted(children.get(parent, []), key=lambda r: (r.type, r.name)):
            provider = _provider_name(record)
            suffix = f"  [provider {provider}]" if provider else ""
            lines.append(f"{'  ' * depth}{record.type}  {record.name}{suffix}")
            walk(record.urn, depth + 1)

    walk(None, 1)
    return lines


def _short(text: str) -> str:
    return " — ".join(line.strip() for line in text.splitlines() if line.strip())


def _warnings(preview: Capture, up: Capture) -> list[str]:
    warnings = [f"{log.severity}: {log.message}" for log in preview.logs if log.severity in ("warning", "error")]
    warnings += [
        f"{r.type} {r.name} uses the default Kubernetes provider (the ambient kubeconfig)"
        for r in up.sorted_resources()
        if is_kubernetes_object(r) and not r.provider
    ]
    return warnings


def _violation_lines(policy: PolicyResult, *, brief: bool = False) -> list[str]:
    """One line per violation. In full, the resource's URN tail and the policy's description before what it
    reported (as `pulumi preview` prints them); in `brief`, the resource's type and name and only what the
    policy reported about it (the description is in docs/policies.md)."""
    lines = []
    for violation in policy.violations:
        where = violation.urn.rsplit("::", 2)[-2:] if violation.urn else ["stack"]
        message = _short(violation.message)
        if brief:
            where = [where[0].rsplit("$", 1)[-1].rsplit(":", 1)[-1], *where[1:]]
            message = [line for line in violation.message.splitlines() if line.strip()][-1].strip()
        lines.append(f"  [{violation.enforcement}] {violation.policy}  {' '.join(where)}: {message}")
    return lines


def render_brief(
    preview: Capture, up: Capture, schema: SchemaReport, policy: PolicyResult | None, note: str = ""
) -> str:
    """One stack among several: its count, then only what applies to it (placeholder secrets, warnings,
    schema notices and problems, violations), each on one line; the tree and the outputs are `--verbose`'s."""
    out = [f"{up.project}/{up.stack}: {len(up.resources)} resources"]
    out += [f"  {note}"] if note else []
    out += [_brief_before_up(record) for record in before_up(up)]
    out += [f"  {w}" for w in _warnings(preview, up)]
    out += [f"  schema note: {notice}" for notice in schema.notices]
    out += [f"  schema: {problem}" for problem in schema.problems]
    out += _violation_lines(policy, brief=True) if policy is not None else []
    return "\n".join(out)


def render_text(preview: Capture, up: Capture, schema: SchemaReport, policy: PolicyResult | None) -> str:
    """The human report: tree, counts, outputs, warnings, schema problems, policy violations."""
    out = [f"Plan for {up.project}/{up.stack}: {len(up.resources)} resources", "", "Resources:"]
    out += _tree(up)
    out += ["", "By type:"]
    for type_token, count in sorted(Counter(r.type for r in up.resources).items()):
        out.append(f"  {count:4d}  {type_token}")
    out += ["", "Outputs (as preview knows them):"]
    for key in sorted(preview.stack_outputs):
        out.append(f"  {key}: {json.dumps(preview.stack_outputs[key], sort_keys=True)}")
    if not preview.stack_outputs:
        out.append("  (none)")
    for record in before_up(up):
        out += ["", *before_up_lines(record)]

    warnings = _warnings(preview, up)
    if warnings:
        out += ["", "Warnings:"] + [f"  {w}" for w in warnings]

    out += ["", f"Schema (Kubernetes {schema.kubernetes_version}, {schema.validated} objects validated):"]
    out += [f"  note: {notice}" for notice in schema.notices]
    out += [f"  {problem}" for problem in schema.problems] or ["  no problems"]

    if policy is not None:
        version = f"@{policy.version}" if policy.version else ""
        out += ["", f"Policy pack {policy.pack}{version} ({len(policy.policies)} policies):"]
        out += _violation_lines(policy)
        if not policy.violations:
            out.append("  no violations")
    return "\n".join(out)
