"""Stack files read as the Pulumi CLI reads them (gopkg.in/yaml.v3 into untyped values), or refused in one
line with the file and the line. Expected values are YAML 1.2 core schema facts, written out by hand."""

from __future__ import annotations

import math

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks_preview.stack_yaml import load, resolve_plain


@pytest.mark.parametrize(
    "text,value",
    [
        ("12:30:00", "12:30:00"),  # no base-60 numbers in YAML 1.2 (PyYAML's 1.1 reads 45000)
        ("on", "on"),
        ("yes", "yes"),
        ("No", "No"),
        ("y", "y"),
        ("true", True),
        ("False", False),
        ("TRUE", True),
        ("~", None),
        ("null", None),
        ("2024-01-01", "2024-01-01"),  # yaml.v3 keeps timestamps as text in untyped values
        ("2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"),
        ("1_000", 1000),
        ("0x1F", 31),
        ("0o17", 15),
        ("017", 15),  # Go's ParseInt(s, 0, 64): a leading 0 is octal
        ("0b101", 5),
        ("-12", -12),
        ("1.30", 1.3),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("1.2.3", "1.2.3"),
        ("v1.30", "v1.30"),
        ("4x8", "4x8"),
    ],
)
def test_plain_scalars_resolve_as_yaml_v3_does(text, value):
    resolved = resolve_plain(text)
    assert resolved == value and type(resolved) is not bool or resolved is value


def test_non_finite_floats_resolve_to_infinity_and_nan():
    assert resolve_plain(".inf") == math.inf and resolve_plain("-.Inf") == -math.inf
    assert math.isnan(resolve_plain(".NaN"))


def write(tmp_path, content):
    path = tmp_path / "Pulumi.s.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_a_stack_file_reads_with_quoted_values_kept_as_text(tmp_path):
    path = write(tmp_path, 'config:\n  a:b: "1.30"\n  a:c: on\n  a:d:\n    - 1\n    - x: 12:30\n')
    assert load(path) == {"config": {"a:b": "1.30", "a:c": "on", "a:d": [1, {"x": "12:30"}]}}


@pytest.mark.parametrize(
    "content,message",
    [
        (b"config:\n  a:b: caf\xe9\n", "Pulumi.s.yaml line 2: 'byte 0xe9' is not UTF-8"),
        ("config:\n  a:b: 1\n  a:b: 2\n", "Pulumi.s.yaml line 3 a:b: '<set>' is given twice (first at line 2)"),
        ("config:\n  a:o:\n    k: 1\n    k: 2\n", "line 4 a:o.k: '<set>' is given twice (first at line 3)"),
        ("config:\n  a:b: !!binary aGk=\n", "line 2 a:b: '!!binary' is a YAML tag"),
        ("config:\n  a:b: !Ref x\n", "line 2 a:b: '!Ref' is a YAML tag"),
        ("config:\n  a:b:\n    - .inf\n", "line 3 a:b[0]: '.inf' is not a finite number"),
        ("config:\n  a:b: [1, 2\n", "Pulumi.s.yaml line 3 is not valid YAML"),
        ("config:\n\ta:b: 1\n", "Pulumi.s.yaml line 2 is not valid YAML"),
        ("config:\n  x: &a {k: 1}\n  a:b:\n    <<: *a\n", "line 4 a:b: '<<' is a YAML merge key"),
    ],
)
def test_every_loader_failure_is_one_line_with_file_and_line(tmp_path, content, message):
    with pytest.raises(UserError) as error:
        load(write(tmp_path, content))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_errors_found_after_reading_still_name_the_line(tmp_path):
    """A value of the wrong declared type is found after the file is read: its line comes with it."""
    from tpu_stacks_preview.config import load_stack_config

    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nconfig:\n  cluster:\n    type: object\n")
    (tmp_path / "__main__.py").write_text("")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  demo:other: 1\n\n  demo:cluster: c\n")
    with pytest.raises(UserError) as error:
        load_stack_config(tmp_path, "dev")
    assert str(error.value).startswith("Pulumi.dev.yaml line 4 demo:cluster: 'c' is not of type object")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  demo:cluster: {}\n  replicas: 3\n")
    with pytest.raises(UserError) as error:
        load_stack_config(tmp_path, "dev")
    assert str(error.value).startswith("Pulumi.dev.yaml line 3 config: 'replicas' has no namespace")
