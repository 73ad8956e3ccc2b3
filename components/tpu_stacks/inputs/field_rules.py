"""The rules every section spec shares, checked when a section is parsed (the spec phase, before any
resource is declared): Kubernetes names and quantities, service-account ids, bucket and image names, engine
flags without secrets, and plain-value checks on every field (booleans are not numbers, numbers are finite
and sensible, `on` is not a boolean, text is ASCII and holds no secret).

A rule raises `FieldProblem`; `validation.parse` turns it into the field's one line.
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import sys
import types
import typing
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.fields import FieldInfo

from tpu_stacks.errors import MISSING, UserError, looks_secret, secret_key

SECRET_INPUT_FIX = (
    "remove it; a token is a secret input: hf_token or api_key_secret (hfToken, apiKeySecret) as a Pulumi "
    "secret, in a stack file pulumi config set --secret tpu-stacks:hfToken (or vllmApiKey)"
)
"""Where a secret goes, for both kinds of user: a library user's component input, a stack file's config key."""


class FieldProblem(ValueError):
    """A field validator's refusal: `parse` renders it as the field's one line (`KEY: VALUE problem; fix`)."""

    def __init__(self, problem: str, fix: str = "", where: str = "", value: Any = MISSING) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix
        self.where = where
        """The path below the field (`[1]`, `.fsdp`) when the problem is inside a list or mapping."""
        self.value = value
        """The bad item itself when it is inside a list or mapping."""

    def inside(self, step: str, item: Any) -> FieldProblem:
        return FieldProblem(self.problem, self.fix, step + self.where, item if self.value is MISSING else self.value)


LARGEST_NUMBER = 1_000_000_000
"""No count, length or size of these stacks comes near a billion: beyond it a number is a typo (`1e20`)."""
LARGEST_REPLICAS = 64
"""The most server replicas one serving stack declares (its node pool's largest size; a traffic target that needs
more is split over stacks): the vLLM and JetStream specs and the traffic sizing read it here."""


def _plain_types(annotation: Any) -> set[type]:
    """The plain types a field accepts (`int | None` -> {int, NoneType}); containers give their origin."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _plain_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return {t for arg in typing.get_args(annotation) for t in _plain_types(arg)}
    if origin is typing.Literal:
        return {type(value) for value in typing.get_args(annotation)}
    return {origin or annotation} if isinstance(origin or annotation, type) else set()


def _check_text(value: str) -> None:
    if looks_secret(value):
        raise FieldProblem(
            "looks like a secret (a token or key) in plain config",
            SECRET_INPUT_FIX,
        )
    for char in value:
        if ord(char) > 127:
            raise FieldProblem("has a character that is not ASCII", "type it again in plain ASCII")


def check_plain_values(value: Any, accepts: set[type], items: frozenset[type] = frozenset()) -> None:
    """What no field accepts: a boolean where a number belongs (YAML `yes` is no count), a number that is
    infinite, NaN or absurd, text where a boolean belongs (`on` is a string in YAML 1.2), a secret or an
    invisible or look-alike character in text (checked inside lists and mappings too)."""
    if isinstance(value, bool):
        if accepts and bool not in accepts and (int in accepts or float in accepts):
            raise FieldProblem("is a boolean, not a number", "give a number")
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise FieldProblem("is not a finite number", "give a number")
        if abs(value) > LARGEST_NUMBER:
            raise FieldProblem(f"is beyond any sensible value (more than {LARGEST_NUMBER:,})", "give a sensible number")
        return
    if isinstance(value, str):
        if accepts == {bool} or accepts == {bool, type(None)}:
            raise FieldProblem("is text, not true or false (YAML 1.2 reads on/yes/no as text)", "write true or false")
        _check_text(value)
        return
    steps = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for step, item in steps:
        try:
            if isinstance(step, str):
                _check_text(step)
            check_plain_values(item, set(items))
        except FieldProblem as problem:
            raise problem.inside(f".{step}" if isinstance(step, str) else f"[{step}]", item) from None


def _item_types(annotation: Any) -> frozenset[type]:
    """The plain types of a list's items or a mapping's values (`dict[str, int]` -> {int})."""
    for arg in [annotation, *typing.get_args(annotation)]:
        origin = typing.get_origin(arg)
        if origin in (list, dict) and typing.get_args(arg):
            return frozenset(_plain_types(typing.get_args(arg)[-1]))
    return frozenset()


def _has_model(annotation: Any) -> bool:
    """Whether a field holds section models (their own validators check their fields, with exact keys)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_has_model(arg) for arg in typing.get_args(annotation))


@dataclass(frozen=True)
class ComponentInput:
    """An input of a component that is not a field of its section spec: the cluster it runs on (a spec of
    its own, parsed on its own) or a secret, which never sits in config and is kept only in a Kubernetes
    Secret. A secret is a `pulumi.Input` (a config secret or another resource's output may be given);
    every other input is plain, read when the component is constructed."""

    name: str
    kind: Any
    """A `SpecModel` (the input is that spec's Args) or a plain type (`str`)."""
    doc: str
    required: bool = False
    secret: bool = False


class SpecModel(BaseModel):
    """The base of every section spec: unknown keys refused, both spellings, and `check_plain_values` on every
    field before its own validation.

    A spec is also the single declaration of its component's typed inputs: scripts/gen_args.py writes the
    sibling `args.py` (the TypedDicts Pulumi's schema inference reads) from the fields, their descriptions
    (`described_fields`: a field's docstring) and defaults, and the two class variables below."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ARGS: ClassVar[str] = ""
    """The generated TypedDict's name, the type name other languages' SDKs see (default: the class name
    without `Spec`, plus `Args`). Specs of one shape may share a name: the TypedDict then states only
    what they agree on."""
    INPUTS: ClassVar[tuple[ComponentInput, ...]] = ()
    """The component's inputs besides the section's fields (a top-level spec only)."""

    @classmethod
    def args_name(cls) -> str:
        return cls.ARGS or cls.__name__.removesuffix("Spec") + "Args"

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _SOURCES[cls] = (getattr(sys.modules.get(cls.__module__), "__file__", None) or "", cls.__qualname__)

    @field_validator("*", mode="before")
    @classmethod
    def _plain_values(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is None or (_has_model(field.annotation) and isinstance(value, (dict, list))):
            return value
        check_plain_values(value, _plain_types(field.annotation), _item_types(field.annotation))
        return value


def described_fields(spec: type[BaseModel]) -> dict[str, FieldInfo]:
    """A spec's `model_fields` with their descriptions: `Field(description=...)`, else the docstring under the field
    in the class that declares it (what pydantic's `use_attribute_docstrings` gives). A `SpecModel`'s are read from
    the source when asked (scripts/gen_args.py, scripts/args_docs.py), not when each spec class is made: on Python
    before 3.13 pydantic finds a class's source by walking the import's frames, about 0.1 s of every plan for text
    no plan uses. Another model's fields are returned as pydantic made them."""
    return _described_fields(spec) if issubclass(spec, SpecModel) else dict(spec.model_fields)


@cache
def _described_fields(spec: type[SpecModel]) -> dict[str, FieldInfo]:
    described = {}
    for name, info in spec.model_fields.items():
        if info.description is None:
            owner = next((k for k in spec.__mro__ if name in vars(k).get("__annotations__", {})), None)
            text = _attribute_docstrings(owner).get(name) if owner is not None else None
            if text is not None:
                info = copy.copy(info)
                info.description = text
        described[name] = info
    return described


_SOURCES: dict[type, tuple[str, str]] = {}
"""Each spec class's file and qualified name, noted when the class is made (a test may move a class to another
module afterwards): where `described_fields` reads its docstrings."""
_SCOPES = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@cache
def _attribute_docstrings(owner: type) -> dict[str, str]:
    """{field: docstring} of the string statements right after an annotated name in the class body itself."""
    file, qualname = _SOURCES.get(owner) or (inspect.getsourcefile(owner) or "", owner.__qualname__)
    node: Any = ast.parse(Path(file).read_text(encoding="utf-8"))
    for name in qualname.split("."):
        if name != "<locals>":  # the last definition of that name, as the module's namespace holds it
            node = [n for n in node.body if isinstance(n, _SCOPES) and n.name == name][-1]
    body = node.body
    found: dict[str, str] = {}
    for before, after in zip(body, body[1:], strict=False):
        if (
            isinstance(before, ast.AnnAssign)
            and isinstance(before.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[before.target.id] = inspect.cleandoc(after.value.value)
    return found


def _rule(check: Any) -> Any:
    """An AfterValidator that turns a NameRule-style check into a FieldProblem."""

    def validate(value: Any) -> Any:
        try:
            return check(value)
        except UserError as error:
            raise FieldProblem(error.problem, error.fix) from None

    return AfterValidator(validate)


def _k8s_name(value: str) -> str:
    from tpu_stacks.names import K8S_NAME

    return K8S_NAME.check("", value)


def _service_account_id(value: str) -> str:
    from tpu_stacks.names import SERVICE_ACCOUNT_ID

    return SERVICE_ACCOUNT_ID.check("", value)


def _quantity(value: str) -> str:
    from tpu_stacks.inputs.k8s_quantity import check_quantity

    return check_quantity(value)


def _bucket(value: str) -> str:
    from tpu_stacks.names import check_bucket_name

    return check_bucket_name(value)


def _image_name(value: str) -> str:
    from tpu_stacks.names import check_image_name

    return check_image_name(value)


def _secret_free_args(value: list[str]) -> list[str]:
    for index, arg in enumerate(value):
        flag = arg.split("=", 1)[0].lstrip("-")
        if arg.startswith("-") and secret_key(flag):
            raise FieldProblem(
                f"passes a secret flag ({arg.split('=', 1)[0]}) in plain config",
                SECRET_INPUT_FIX,
                where=f"[{index}]",
                value=arg,
            )
    return value


K8sName = Annotated[str, _rule(_k8s_name)]
"""A Kubernetes object name (DNS-1123 label): namespaces and ServiceAccounts."""
ServiceAccountId = Annotated[str, _rule(_service_account_id)]
"""An IAM service account id (6-30 characters)."""
Quantity = Annotated[str, _rule(_quantity)]
"""A positive Kubernetes quantity (`8`, `500m`, `64Gi`)."""
BucketName = Annotated[str, _rule(_bucket)]
"""A Cloud Storage bucket name, by Google's naming rules."""
ImageName = Annotated[str, _rule(_image_name)]
"""An image name (and optional tag) inside an Artifact Registry repository."""
EngineArgs = Annotated[list[str], _rule(_secret_free_args)]
"""Extra engine flags: never a secret (a token there is written into manifests and the plan)."""
