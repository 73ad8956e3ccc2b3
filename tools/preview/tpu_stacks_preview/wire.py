"""Turn Pulumi wire values (protobuf Struct, as the SDK serialises them) into plain JSON.

The engine never sees Python objects, only this wire form: numbers are doubles, secrets and
resource references are maps tagged with a signature key, and a value not known during preview is
a fixed sentinel string. Reports show secrets as "[secret]" and unknowns as "(known after apply)";
integral doubles become ints, as the providers' Go JSON encoders print them.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2

# The wire constants are part of Pulumi's protocol (sdk/go/common/resource/sig), not of one SDK.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
ASSET_SIG = "c44067f5952c0a294b673a41bacd8c17"
ARCHIVE_SIG = "0def7320c3a5731c473e5ecbe6d01bc7"

SECRET_MASK = "[secret]"
UNKNOWN_MASK = "(known after apply)"


def struct_to_dict(struct: struct_pb2.Struct | None) -> dict[str, Any]:
    """The Struct as Python data, still in wire form (signatures kept)."""
    if struct is None:
        return {}
    return json_format.MessageToDict(struct)


def dict_to_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    """Python data (already wire form) as a Struct."""
    struct = struct_pb2.Struct()
    struct.update(data)
    return struct


def integral(value: Any) -> Any:
    """Integral floats back to ints, recursively (protobuf has no integers); map keys sorted."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [integral(v) for v in value]
    return value


class PlainValue:
    """One wire value rendered for people: masked secrets, shown unknowns, paths of both.

    By default a secret becomes "[secret]" whole, as `pulumi preview` shows it. With
    `keep_shape=True` only its scalar leaves are masked, so a Secret's `stringData` is still a map
    of masked strings and the object keeps passing schema validation.
    """

    def __init__(self, wire: Any, *, keep_shape: bool = False) -> None:
        self.secret_paths: list[str] = []
        self.unknown_paths: list[str] = []
        self._keep_shape = keep_shape
        self.value = self._walk(wire, "")

    def _mask(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._mask(v) for k, v in value.items() if k != SIG_KEY}
        if isinstance(value, list):
            return [self._mask(v) for v in value]
        return SECRET_MASK

    @property
    def has_unknowns(self) -> bool:
        return bool(self.unknown_paths)

    def _walk(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and value == UNKNOWN:
            self.unknown_paths.append(path)
            return UNKNOWN_MASK
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, list):
            return [self._walk(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG or sig == OUTPUT_SIG and value.get("secret"):
            self.secret_paths.append(path)
            return self._mask(unwrap(value.get("value"))) if self._keep_shape else SECRET_MASK
        if sig == OUTPUT_SIG:
            if "value" not in value:
                self.unknown_paths.append(path)
                return UNKNOWN_MASK
            return self._walk(value["value"], path)
        if sig == RESOURCE_SIG:
            return value.get("urn", "")
        if sig in (ASSET_SIG, ARCHIVE_SIG):
            return {k: v for k, v in value.items() if k != SIG_KEY}
        return {k: self._walk(v, f"{path}.{k}" if path else k) for k, v in value.items()}


def unwrap(value: Any) -> Any:
    """The real value inside secret/output wrappers (None when unknown): for mocks and renderers."""
    if isinstance(value, str) and value == UNKNOWN:
        return None
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig in (SECRET_SIG, OUTPUT_SIG):
            return unwrap(value.get("value"))
        if sig == RESOURCE_SIG:
            return value.get("id") or value.get("urn")
        return {k: unwrap(v) for k, v in value.items()}
    return value
