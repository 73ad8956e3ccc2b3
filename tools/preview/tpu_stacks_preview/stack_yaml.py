"""Read a Pulumi project or stack file the way the Pulumi CLI reads it, or refuse it in one line.

The CLI parses `Pulumi.yaml` and `Pulumi.<stack>.yaml` with Go's gopkg.in/yaml.v3
(pulumi/pulumi sdk/go/common/encoding/marshal.go, `yaml.Unmarshal`; sdk/go.mod pins v3.0.1) into
untyped values (sdk/go/common/resource/config/object.go, `UnmarshalYAML` into `any`). That is
YAML 1.2's core schema, not PyYAML's YAML 1.1, so (go-yaml/yaml v3 resolve.go and decode.go):

- booleans are only true/True/TRUE and false/False/FALSE: `on`, `yes`, `off`, `no`, `y` are strings;
- there are no base-60 numbers: `12:30:00` is a string;
- a plain scalar that looks like a date or timestamp (`2024-01-01`) is kept as its text when decoded
  into an untyped value ("for backward compatibility reasons we set it as a string");
- integers are Go's `strconv.ParseInt(s, 0, 64)` with `_` removed (`0x1F`, `0o17`, `017`, `0b101`);
- a key given twice in one mapping is an error ("mapping key ... already defined at line N").

What the CLI cannot hand to a program is refused here with the file and the line: a file that is not
UTF-8, a non-finite number (`.inf`, `.nan`: config/object.go `MarshalString` JSON-encodes numbers, and
JSON has no infinity), and explicit tags (`!!binary`, `!Ref`), which a stack file has no use for.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from tpu_stacks.errors import MISSING, UserError

_PLAIN = "tag:tpu-stacks:plain"
_CORE = "tag:yaml.org,2002:"
_MAP = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")  # yaml.v3's yamlStyleFloat
_TIMESTAMP_START = re.compile(r"^[0-9]{4}-")  # yaml.v3 parseTimestamp's quick check
_INT64 = 2**63


class YamlFloat(float):
    """A float read from a plain scalar, with the text the user wrote (`1.30`, which reads as 1.3)."""

    text: str = ""


def _float(text: str) -> YamlFloat:
    number = YamlFloat(text)
    number.text = text
    return number


class Located(dict[str, Any]):
    """A mapping read from the file, with the line of each of its keys (for errors found later)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: dict[str, int] = {}


def line_of(mapping: Any, key: str) -> str:
    """` (line N)` for a key of a mapping read by `load`; empty for any other mapping."""
    line = getattr(mapping, "lines", {}).get(key)
    return f" (line {line})" if line else ""


class _Loader(yaml.SafeLoader):
    """PyYAML's parser and composer; every plain scalar is resolved below by yaml.v3's rules."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is ScalarNode and implicit[0]:
            return _PLAIN
        return super().resolve(kind, value, implicit)


def _go_int(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 0, 64) (then ParseUint), as yaml.v3 tries it."""
    sign = -1 if text.startswith("-") else 1
    body = text[1:] if text[:1] in "+-" else text
    bases = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}
    base, digits = bases.get(body[:2], 0), body[2:]
    if base == 0:
        base, digits = (8, body[1:]) if len(body) > 1 and body[0] == "0" else (10, body)
    if not digits:
        return None
    try:
        number = sign * int(digits, base)
    except ValueError:
        return None
    return number if -_INT64 <= number < 2 * _INT64 else None


def resolve_plain(text: str) -> Any:
    """A plain (unquoted) scalar as yaml.v3 decodes it into an untyped value."""
    if text in _MAP:
        return _MAP[text]
    first = text[0]
    if first == ".":
        return _float(text) if _FLOAT.match(text) else text
    if not (first.isdigit() and first.isascii() or first in "+-"):
        return text
    if _TIMESTAMP_START.match(text):
        return text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _FLOAT.match(plain):
        return _float(text)
    if plain.startswith(("0b", "-0b", "0o", "-0o")):
        return _go_int(plain)
    return text


class _Reader:
    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, node: Node | None, key: str, value: Any, problem: str, fix: str) -> UserError:
        line = f" line {node.start_mark.line + 1}" if node is not None else ""
        where = f"{self.path.name}{line}"
        return UserError(f"{where} {key}".strip() if key else where, value, problem, fix)

    def value(self, node: Node, key: str) -> Any:
        if isinstance(node, MappingNode):
            return self.mapping(node, key)
        if isinstance(node, SequenceNode):
            if node.tag != _CORE + "seq":
                raise self._tag(node, key)
            return [self.value(item, f"{key}[{index}]") for index, item in enumerate(node.value)]
        return self.scalar(node, key)

    def _tag(self, node: Node, key: str) -> UserError:
        tag = node.tag.replace(_CORE, "!!")
        return self.fail(
            node, key, tag, "is a YAML tag, which a Pulumi stack file has no use for", "remove the tag; quote the value"
        )

    def mapping(self, node: MappingNode, key: str) -> Located:
        if node.tag != _CORE + "map":
            raise self._tag(node, key)
        out = Located()
        seen = out.lines
        for key_node, value_node in node.value:
            name = self.scalar(key_node, key) if isinstance(key_node, ScalarNode) else None
            if not isinstance(name, (str, int, float, bool)) or name is None:
                raise self.fail(key_node, key, "<key>", "is not a plain key", "write keys as plain text")
            name = str(name).lower() if isinstance(name, bool) else str(name)
            child = f"{key}.{name}" if key and key != "config" else name  # config keys as written
            if name == "<<":
                raise self.fail(key_node, key, "<<", "is a YAML merge key", "write the settings out in full")
            if name in seen:
                raise self.fail(
                    key_node,
                    child,
                    "<set>",
                    f"is given twice (first at line {seen[name]}); the Pulumi CLI refuses duplicate keys",
                    "keep one of them",
                )
            seen[name] = key_node.start_mark.line + 1
            out[name] = self.value(value_node, child)
        return out

    def scalar(self, node: ScalarNode, key: str) -> Any:
        if node.tag == _PLAIN:
            value = resolve_plain(node.value)
        elif node.tag == _CORE + "str":
            value = node.value
        elif node.tag in (_CORE + "int", _CORE + "float", _CORE + "bool", _CORE + "null"):
            value = resolve_plain(node.value)
        else:
            raise self._tag(node, key)
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(
                node,
                key,
                node.value,
                "is not a finite number (the Pulumi CLI encodes numbers as JSON)",
                "give a number",
            )
        return value


def load(path: Path) -> Any:
    """The file's content as the Pulumi CLI sees it; any problem is one UserError with the file and line."""
    reader = _Reader(path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise UserError(
            f"{path.name} line {line}", f"byte 0x{data[error.start]:02x}", "is not UTF-8", "save the file as UTF-8"
        ) from None
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path.name} line {mark.line + 1}" if mark is not None else path.name
        problem = " ".join(str(getattr(error, "problem", None) or "is not valid YAML").split())
        raise UserError(where, MISSING, f"is not valid YAML: {problem}", "fix the syntax") from None
    return None if node is None else reader.value(node, "")
