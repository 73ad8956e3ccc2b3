"""Read `Pulumi.yaml` and `Pulumi.<stack>.yaml` the way the Pulumi CLI hands config to a program.

The CLI gives the language host a flat map of `namespace:key` strings plus the set of secret
keys. Offline we build the same map ourselves so `pulumi.Config()` behaves as under
`pulumi preview`: bare keys declared in Pulumi.yaml belong to the project's namespace, objects and
lists arrive JSON-encoded, and `secure:` values (which cannot be decrypted without the stack's
secrets provider) become a placeholder that is still marked secret.

The committed stack files carry no `secure:` values (the real CLI cannot decrypt a value encrypted
with nobody's key), so a secret the program needs is simply missing: strict by default, as the real
preview is. `placeholders` names the secrets that stand in when missing (`tpu-stacks plan
--placeholder-secrets`), and a stack that imports a Pulumi ESC environment (`environment:`) gets them too,
since the environment may provide them and cannot be opened offline. Which secrets: those this repository's
program declares (`stacks/config.py`, filled before the run), and any other secret the program reads, in
whatever namespace (a user's own project: `my-serving:hfToken`), found when the run stops on it
(`fill_secrets`, `with_placeholder`; the engine runs the program again).
"""

from __future__ import annotations

import difflib
import importlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tpu_stacks.errors import MISSING, UserError
from tpu_stacks_preview import stack_yaml
from tpu_stacks_preview.imports import isolated_imports

_DECLARATION_KEYS = {"type", "description", "secret", "default", "value", "items"}
# The project file's config types; `object` since CLI 3.187 (pulumi/pulumi#20129, #20132).
_TYPES = ("string", "integer", "boolean", "array", "object")


def secret_placeholder(key: str) -> str:
    """The stand-in for an encrypted value: recognisable, and never a real secret."""
    return f"offline-placeholder-for-{key}"


@dataclass(frozen=True)
class _Declaration:
    """One entry of Pulumi.yaml's `config:` block."""

    key: str
    type: str | None = None
    secret: bool = False
    value: Any = None
    has_value: bool = False


@dataclass(frozen=True)
class StackConfig:
    """A stack's config as the engine passes it: `ns:key` -> string, plus the secret keys."""

    project: str
    stack: str
    project_dir: Path
    main: Path
    values: Mapping[str, str]
    secret_keys: frozenset[str] = field(default_factory=frozenset)
    environments: tuple[str, ...] = ()
    """The Pulumi ESC environments the stack file imports (`environment:`); not opened offline."""
    placeholders: tuple[str, ...] = ()
    """The secrets that were missing and stand in as placeholders (sorted)."""
    fill_secrets: bool = False
    """Whether any other secret the program requires and the stack lacks stands in too (--placeholder-secrets,
    or an ESC environment): see `with_placeholder`."""

    def with_placeholder(self, key: str) -> StackConfig:
        """This config with `key` (`ns:key`, any namespace) standing in as a placeholder, marked secret."""
        return replace(
            self,
            values={**self.values, key: secret_placeholder(key)},
            secret_keys=self.secret_keys | {key},
            placeholders=tuple(sorted({*self.placeholders, key})),
        )

    def get(self, key: str) -> str | None:
        """The raw string for `ns:key`, or None."""
        return self.values.get(key)

    def namespace(self, namespace: str) -> dict[str, str]:
        """Keys of one namespace without their prefix (`gcp:project` -> `project`): provider config."""
        prefix = f"{namespace}:"
        return {k[len(prefix) :]: v for k, v in self.values.items() if k.startswith(prefix)}


def _read_yaml(path: Path) -> Any:
    """The file as the Pulumi CLI parses it (YAML 1.2 scalars, duplicate keys refused): stack_yaml."""
    return stack_yaml.load(path)


def _as_config_string(value: Any, key: str, secret_keys: set[str]) -> str:
    """Encode one value as the CLI does: scalars as text, objects and lists as JSON."""
    if isinstance(value, dict) and set(value) == {"secure"}:
        secret_keys.add(key)
        return secret_placeholder(key)
    if isinstance(value, (dict, list)):
        return json.dumps(_strip_secure(value, key, secret_keys), separators=(",", ":"), sort_keys=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def _strip_secure(value: Any, key: str, secret_keys: set[str]) -> Any:
    """Replace nested `{secure: ...}` values; any of them makes the whole key secret."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            secret_keys.add(key)
            return secret_placeholder(key)
        return {k: _strip_secure(v, key, secret_keys) for k, v in value.items()}
    if isinstance(value, list):
        return [_strip_secure(v, key, secret_keys) for v in value]
    return value


def _full_key(project: str, key: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _declarations(project: str, raw: Any, source: Path) -> list[_Declaration]:
    if raw is None:
        return []
    if not isinstance(raw, dict):
        raise UserError(f"{source.name} config", raw, "is not a map", "write `config:` as key: value pairs")
    out: list[_Declaration] = []
    for key, spec in raw.items():
        full = _full_key(project, str(key))
        foreign = not full.startswith(f"{project}:")
        if isinstance(spec, dict) and (set(spec) <= _DECLARATION_KEYS):
            if foreign and "default" in spec:
                raise UserError(
                    f"{source.name} config.{key}",
                    spec["default"],
                    "is a default for a key outside the project's namespace",
                    "use `value:` instead of `default:`",
                )
            if "type" in spec and spec["type"] not in _TYPES:
                raise UserError(
                    f"{source.name} config.{key}.type",
                    spec["type"],
                    "is not a config type the Pulumi CLI knows",
                    f"use one of {', '.join(_TYPES)}",
                )
            has_value = "value" in spec or "default" in spec
            value = spec.get("value", spec.get("default"))
            out.append(_Declaration(full, spec.get("type"), bool(spec.get("secret")), value, has_value))
        elif isinstance(spec, dict):
            raise UserError(
                f"{source.name} config.{key}",
                spec,
                "is an object, not a declaration",
                "declare it with type/default/value keys",
            )
        else:
            out.append(_Declaration(full, None, False, spec, True))
    return out


def _check_type(decl: _Declaration, value: Any, stack_file: Path, line: str = "") -> None:
    """The CLI rejects stack values that do not match the type Pulumi.yaml declares (`line`: ` line N`)."""
    if decl.type is None or isinstance(value, dict) and set(value) == {"secure"}:
        return
    if decl.type == "string" and isinstance(value, stack_yaml.YamlFloat):
        # The CLI passes the number's JSON text ("1.3" for 1.30, config/object.go MarshalString): a version
        # written as a number silently loses its trailing zero, so say so instead of planning 1.3.
        raise UserError(
            f"{stack_file.name}{line} {decl.key}",
            value.text,
            f"is a YAML number, which reads as {float(value)!r}",
            f'quote it: {decl.key}: "{value.text}"',
        )
    ok = {
        "string": lambda v: isinstance(v, str) or isinstance(v, (int, float)) and not isinstance(v, bool),
        "integer": lambda v: (
            isinstance(v, int) and not isinstance(v, bool) or isinstance(v, str) and v.lstrip("-").isdigit()
        ),
        "boolean": lambda v: isinstance(v, bool) or v in ("true", "false"),
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }.get(decl.type)
    if ok is not None and not ok(value):
        raise UserError(
            f"{stack_file.name}{line} {decl.key}",
            value,
            f"is not of type {decl.type} as Pulumi.yaml declares",
            f"set {'an' if decl.type[0] in 'aeiou' else 'a'} {decl.type} value",
        )


def _line(mapping: Any, key: str) -> str:
    """` line N` of a key the loader read (stack_yaml.Located), for errors found after reading."""
    return stack_yaml.line_of(mapping, key).replace(" (line ", " line ").rstrip(")")


def _stack_entries(raw: Any, stack_file: Path) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise UserError(f"{stack_file.name} config", raw, "is not a map", "write `config:` as ns:key: value pairs")
    for key in raw:
        if ":" not in str(key):
            raise UserError(
                f"{stack_file.name}{_line(raw, str(key))} config",
                str(key),
                "has no namespace",
                "write keys as <namespace>:<name>, e.g. <project>:" + str(key),
            )
    return raw if isinstance(raw, stack_yaml.Located) else {str(k): v for k, v in raw.items()}


def load_project(project_dir: Path) -> tuple[dict[str, Any], Path]:
    """Pulumi.yaml's content and path; a missing or nameless project file is the user's mistake."""
    for name in ("Pulumi.yaml", "Pulumi.yml"):
        path = project_dir / name
        if path.is_file():
            data = _read_yaml(path) or {}
            if not isinstance(data, dict) or not data.get("name"):
                raise UserError(str(path), "", "has no `name:`", "name the project in Pulumi.yaml")
            return data, path
    raise UserError("--cwd", str(project_dir), "has no Pulumi.yaml", "point --cwd at a Pulumi project")


def require_stack_file(project_dir: Path, stack: str, project_data: dict[str, Any] | None = None) -> Path:
    """`Pulumi.<stack>.yaml` in the project's stack directory (`stackConfigDir`), or the user's mistake in
    one line: the closest stack name when one is near, else the stacks that are there. `plan` and `e2e`
    both ask here, so the two commands refuse a misspelt stack alike."""
    data = project_data if project_data is not None else load_project(project_dir)[0]
    stack_dir = project_dir / str(data.get("stackConfigDir") or ".")
    stack_file = stack_dir / f"Pulumi.{stack}.yaml"
    if stack_file.is_file():
        return stack_file
    known = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in stack_dir.glob("Pulumi.*.yaml"))
    close = difflib.get_close_matches(stack, known, n=1)
    if close:
        fix = f"did you mean '{close[0]}'?"
    else:
        fix = f"stacks here: {', '.join(known)}" if known else f"create {stack_file.name}"
    raise UserError("--stack", stack, f"has no stack file {stack_file}", fix)


def check_python_program(project_dir: Path) -> None:
    """Refuse, in one line, a project whose program is not Python (`runtime: yaml`, `nodejs`, ...).

    The planner runs the program in-process with the Python SDK's mocks, so it plans Python programs
    only; a Pulumi YAML program (examples/vllm-yaml) is planned by `pulumi preview`, which runs it
    through its language host. Said before anything else is looked for (stack files, `main:`), so the
    answer is this and not a missing `__main__.py`. A project without `runtime:` is left to the rest."""
    data, path = load_project(project_dir)
    runtime = data.get("runtime")
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name is not None and str(name) != "python":
        raise UserError(
            f"{path.name} runtime",
            str(name),
            "is not planned offline: `tpu-stacks plan` plans Python programs",
            "`pulumi preview`" + ("" if str(project_dir) == "." else f" in {project_dir}") + " plans this one",
        )


def _environments(raw: Any, stack_file: Path) -> tuple[str, ...]:
    """`environment:` as the CLI reads it: a list of ESC environment names (`imports:` form too)."""
    if raw is None:
        return ()
    if isinstance(raw, dict):
        raw = raw.get("imports", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(name, str) and name for name in raw):
        raise UserError(
            f"{stack_file.name} environment",
            raw,
            "is not a list of ESC environment names",
            "write it as `environment: [<project>/<env>]`",
        )
    return tuple(raw)


# Where the program declares its secrets (`SECRET_KEYS` under `NAMESPACE`): the one list, read from there.
SECRETS_MODULE = "stacks.config"


def declared_secrets(project_dir: Path) -> tuple[str, ...]:
    """The program's declared secret keys as `ns:key`, imported from its own `stacks/config.py`;
    none for a project without that module (a plain Pulumi program has no declaration to read)."""
    project_dir = project_dir.resolve()
    if not (project_dir / (SECRETS_MODULE.replace(".", "/") + ".py")).is_file():
        return ()
    with isolated_imports([project_dir]):
        module = importlib.import_module(SECRETS_MODULE)
        return tuple(f"{module.NAMESPACE}:{key}" for key in module.SECRET_KEYS)


def load_stack_config(
    project_dir: Path,
    stack: str,
    *,
    placeholder_secrets: bool = False,
    secrets: Collection[str] | None = None,
) -> StackConfig:
    """Merge Pulumi.yaml declarations with Pulumi.<stack>.yaml into the engine's config map.

    With `placeholder_secrets`, or when the stack imports an ESC environment, each of the program's
    declared secrets (`secrets`, default `declared_secrets(project_dir)`) that the stack does not set
    stands in as a placeholder: marked secret and clearly named, never a real value. Any other secret the
    program requires is filled when the run asks for it (`fill_secrets`)."""
    project_dir = project_dir.resolve()
    check_python_program(project_dir)
    project_data, project_file = load_project(project_dir)
    project = str(project_data["name"])
    stack_file = require_stack_file(project_dir, stack, project_data)

    stack_data = _read_yaml(stack_file) or {}
    if not isinstance(stack_data, dict):
        raise UserError(stack_file.name, MISSING, "is not a map of settings", "start it with `config:`")
    entries = _stack_entries(stack_data.get("config"), stack_file)
    environments = _environments(stack_data.get("environment"), stack_file)

    values: dict[str, str] = {}
    secret_keys: set[str] = set()
    for decl in _declarations(project, project_data.get("config"), project_file):
        if decl.key in entries:
            _check_type(decl, entries[decl.key], stack_file, _line(entries, decl.key))
            if decl.secret and not (isinstance(entries[decl.key], dict) and "secure" in entries[decl.key]):
                raise UserError(
                    f"{stack_file.name}{_line(entries, decl.key)} {decl.key}",
                    "(plain text)",
                    "must be encrypted: Pulumi.yaml declares it secret",
                    f"pulumi config set --secret {decl.key} ...",
                )
            continue
        if decl.has_value:
            values[decl.key] = _as_config_string(decl.value, decl.key, secret_keys)
        else:
            raise UserError(
                f"{stack_file.name} {decl.key}",
                "(unset)",
                f"is required by Pulumi.yaml for stack {stack!r}",
                f"write {decl.key}: as a mapping in {stack_file.name}"
                if decl.type == "object"
                else f"pulumi config set {decl.key} <value>",
            )
    for key, value in entries.items():
        values[key] = _as_config_string(value, key, secret_keys)
    stand_ins: tuple[str, ...] = ()
    if placeholder_secrets or environments:
        wanted = declared_secrets(project_dir) if secrets is None else secrets
        stand_ins = tuple(sorted(key for key in wanted if key not in values))
    for key in stand_ins:
        values[key] = secret_placeholder(key)
        secret_keys.add(key)

    main = project_dir / str(project_data.get("main") or ".")
    if main.is_dir():
        main = main / "__main__.py"
    if not main.is_file():
        raise UserError(f"{project_file.name} main", str(main), "does not exist", "point `main:` at the program")
    fill = placeholder_secrets or bool(environments)
    return StackConfig(project, stack, project_dir, main, values, frozenset(secret_keys), environments, stand_ins, fill)
