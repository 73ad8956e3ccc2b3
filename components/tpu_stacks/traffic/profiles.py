"""GKE Inference Quickstart profiles in: measurements Google published for a model server on an accelerator.

`gcloud container ai profiles ...` and the `gkerecommender.googleapis.com` API answer `FetchProfiles` and
`FetchBenchmarkingData` with `{"profile": [Profile, ...]}` ([GIQ]). A saved response is read here in the
proto's JSON mapping: lowerCamelCase names (`modelServerInfo`, `acceleratorType`, `tpuTopology`,
`instanceType`, `resourcesUsed.acceleratorCount`, `performanceStats[]` with `queriesPerSecond`,
`outputTokensPerSecond`, `ntpotMilliseconds`, `ttftMilliseconds`, `cost[]`), the original snake_case names
accepted too, as proto3 JSON parsers do; an int64 (`Amount.units`) arrives as a JSON string and is read
either way. Each profile's `performanceStats` are its operating points: the loads a matching candidate may
run at (`basis: "profile"`).

A profile carries no request lengths, so its input throughput is derived as queries per second x the
target's input length when it gives a QPS, else it is unknown (None) and GIQ's cost falls on output tokens.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tpu_stacks.catalog.models import ResolvedModel, lookup_model
from tpu_stacks.catalog.tpu import SliceShape, generation, generation_of_accelerator, generation_of_machine_type
from tpu_stacks.errors import UserError

KEY = "--profiles"
PROTO = "[GIQ]"


@dataclass(frozen=True)
class ProfilePoint:
    """One entry of `performanceStats`: the load and the latencies GIQ measured at it."""

    queries_per_second: float | None
    output_tokens_per_second: float
    ntpot_ms: float | None
    ttft_ms: float | None
    cost_per_million_output_tokens: float | None = None
    """GIQ's own figure (first `cost[]` entry), at GIQ's pricing model; shown for reference only."""

    def document(self) -> dict[str, Any]:
        """The `performanceStats` entry in the proto's JSON mapping, as `_point` reads it back: the int32 fields
        (output tokens per second, NTPOT, TTFT) as whole numbers, the float QPS to the thousandth; a field this point
        does not know is left out."""
        stats: dict[str, Any] = {}
        if self.queries_per_second is not None:
            stats["queriesPerSecond"] = round(self.queries_per_second, 3)
        stats["outputTokensPerSecond"] = round(self.output_tokens_per_second)
        if self.ntpot_ms is not None:
            stats["ntpotMilliseconds"] = round(self.ntpot_ms)
        if self.ttft_ms is not None:
            stats["ttftMilliseconds"] = round(self.ttft_ms)
        if self.cost_per_million_output_tokens is not None:
            units, nanos = divmod(round(self.cost_per_million_output_tokens * 1e9), 10**9)
            stats["cost"] = [{"costPerMillionOutputTokens": {"units": str(units), "nanos": nanos}}]
        return stats


@dataclass(frozen=True)
class Profile:
    """One GIQ profile: a model server setup on one accelerator and its operating points."""

    model: str
    model_server: str
    model_server_version: str
    accelerator_type: str
    tpu_topology: str
    instance_type: str
    accelerator_count: int | None
    points: tuple[ProfilePoint, ...]

    def document(self) -> dict[str, Any]:
        """This profile in the proto's JSON mapping, as `read_profiles` reads it back (the one place the field
        names are written both ways): what `tpu-stacks bench` saves."""
        profile: dict[str, Any] = {
            "modelServerInfo": {
                "model": self.model,
                "modelServer": self.model_server,
                "modelServerVersion": self.model_server_version,
            },
            "acceleratorType": self.accelerator_type,
            "tpuTopology": self.tpu_topology,
            "instanceType": self.instance_type,
            "performanceStats": [point.document() for point in self.points],
        }
        if self.accelerator_count is not None:
            profile["resourcesUsed"] = {"acceleratorCount": self.accelerator_count}
        return profile

    @property
    def label(self) -> str:
        version = f" {self.model_server_version}" if self.model_server_version else ""
        where = self.tpu_topology or self.instance_type or self.accelerator_type
        return f"GIQ profile {self.model_server}{version} {self.model} on {self.accelerator_type} {where}".strip()

    def generation_name(self) -> str | None:
        """The TPU generation the profile ran on, from its instance type or accelerator (None: not a TPU)."""
        found = generation_of_machine_type(self.instance_type) or generation_of_accelerator(self.accelerator_type)
        if found:
            return found.name
        try:
            return generation(self.accelerator_type).name
        except UserError:
            return None

    def matches(self, model: ResolvedModel, shape: SliceShape, engine: str) -> bool:
        """Same model (any name the catalogue gives it), same server, same generation and slice."""
        if self.model_server.lower() != engine or self.generation_name() != shape.generation:
            return False
        try:
            if not lookup_model(self.model).architecture.same_weights(model.architecture):
                return False
        except UserError:
            return False
        if self.instance_type and self.instance_type != shape.machine_type:
            return False
        if self.tpu_topology:
            return self.tpu_topology == shape.topology
        return self.accelerator_count == shape.chips


def _field(record: dict[str, Any], camel: str, snake: str, default: Any = None) -> Any:
    """A field by its JSON name or its proto name (proto3 JSON parsers accept both)."""
    if camel in record:
        return record[camel]
    return record.get(snake, default)


def _number(value: Any, where: str, path: str) -> float | None:
    """A proto3 JSON number: a JSON number or a decimal string (int64 is written as a string); finite and not
    negative (proto3 JSON spells NaN and Infinity as strings; no throughput, latency or count is below zero)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _bad(path, f"{where} is {value!r}, not a number")
    try:
        number = float(value)
    except ValueError:
        raise _bad(path, f"{where} is {value!r}, not a number") from None
    if not math.isfinite(number) or number < 0:
        raise _bad(path, f"{where} is {value!r}, not a finite number of zero or more")
    return number


def _bad(path: str, problem: str) -> UserError:
    return UserError(
        KEY,
        path,
        f"is not a GIQ FetchProfiles/FetchBenchmarkingData response: {problem}",
        f'save the API response as JSON ({{"profile": [...]}}, the proto\'s JSON mapping; {PROTO})',
    )


def _amount(value: Any, where: str, path: str) -> float | None:
    """`Amount{units, nanos}` in dollars; `units` is an int64, so a string or a number."""
    if not isinstance(value, dict):
        return None
    units = _number(value.get("units", 0), f"{where}.units", path) or 0.0
    nanos = _number(value.get("nanos", 0), f"{where}.nanos", path) or 0.0
    return units + nanos / 1e9


def _point(record: Any, where: str, path: str) -> ProfilePoint:
    if not isinstance(record, dict):
        raise _bad(path, f"{where} is not an object")
    output = _number(_field(record, "outputTokensPerSecond", "output_tokens_per_second"), where, path)
    if not output:  # None or 0 (_number refuses a negative one)
        raise _bad(path, f"{where} has no positive outputTokensPerSecond")
    costs = _field(record, "cost", "cost", []) or []
    first_cost = costs[0] if isinstance(costs, list) and costs else {}
    return ProfilePoint(
        queries_per_second=_number(_field(record, "queriesPerSecond", "queries_per_second"), where, path),
        output_tokens_per_second=output,
        ntpot_ms=_number(_field(record, "ntpotMilliseconds", "ntpot_milliseconds"), where, path),
        ttft_ms=_number(_field(record, "ttftMilliseconds", "ttft_milliseconds"), where, path),
        cost_per_million_output_tokens=_amount(
            _field(first_cost, "costPerMillionOutputTokens", "cost_per_million_output_tokens")
            if isinstance(first_cost, dict)
            else None,
            f"{where}.cost[0].costPerMillionOutputTokens",
            path,
        ),
    )


def _profile(record: Any, index: int, path: str) -> Profile:
    where = f"profile[{index}]"
    if not isinstance(record, dict):
        raise _bad(path, f"{where} is not an object")
    server = _field(record, "modelServerInfo", "model_server_info")
    if not isinstance(server, dict) or not server.get("model"):
        raise _bad(path, f"{where}.modelServerInfo.model is missing")
    used = _field(record, "resourcesUsed", "resources_used", {}) or {}
    count = _number(_field(used, "acceleratorCount", "accelerator_count"), f"{where}.resourcesUsed", path)
    stats = _field(record, "performanceStats", "performance_stats", [])
    if not isinstance(stats, list) or not stats:
        raise _bad(path, f"{where}.performanceStats is empty")
    return Profile(
        model=str(server["model"]),
        model_server=str(_field(server, "modelServer", "model_server", "")),
        model_server_version=str(_field(server, "modelServerVersion", "model_server_version", "")),
        accelerator_type=str(_field(record, "acceleratorType", "accelerator_type", "")),
        tpu_topology=str(_field(record, "tpuTopology", "tpu_topology", "")),
        instance_type=str(_field(record, "instanceType", "instance_type", "")),
        accelerator_count=int(count) if count is not None else None,
        points=tuple(_point(stat, f"{where}.performanceStats[{i}]", path) for i, stat in enumerate(stats)),
    )


def read_profiles(path: str | Path) -> tuple[Profile, ...]:
    """Every profile of a saved FetchProfiles or FetchBenchmarkingData response; a bad file is one UserError."""
    shown = str(path)
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UserError(KEY, shown, f"cannot be read ({error.strerror or error})", "give a readable file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise _bad(shown, f"not JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("profile"), list):
        raise _bad(shown, 'no "profile" list at the top')
    return tuple(_profile(record, index, shown) for index, record in enumerate(document["profile"]))


def profiles_document(profiles: tuple[Profile, ...] | list[Profile]) -> dict[str, Any]:
    """A FetchProfiles response holding `profiles` (`{"profile": [...]}`), as `read_profiles` reads it."""
    return {"profile": [profile.document() for profile in profiles]}
