"""The one-line error a user sees, at each rule's edge: the 80-character cut, what counts as non-ASCII, how a
character is escaped, how an Output and a secret are shown, and the key moved under a prefix, a namespace or the
user's own spelling.

Sources for the expected text: Python's escapes (`\\uXXXX` for a code point up to U+FFFF, `\\UXXXXXXXX` above it,
https://docs.python.org/3/reference/lexical_analysis.html#escape-sequences); ASCII ends at U+007F (DEL), the last
of its 128 code points; Unicode's character names (U+00A0 NO-BREAK SPACE, U+007F has no name in
unicodedata: a control); Pulumi's config keys are `namespace:key` (https://www.pulumi.com/docs/iac/concepts/config/).
"""

import pulumi

from tpu_stacks.errors import MISSING, UserError, looks_secret, printable, shorten, show, visible

HF = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7"


# -- length ---------------------------------------------------------------------------------------


def test_a_value_shown_in_80_characters_is_whole_and_81_are_cut_to_60_with_the_length():
    assert shorten("x" * 80) == "x" * 80
    assert shorten("x" * 81) == "x" * 60 + "… (81 characters)"
    assert shorten("x" * 90, length=88) == "x" * 60 + "… (88 characters)"  # the length of the value, not its repr
    assert show("y" * 100) == "'" + "y" * 59 + "… (100 characters)"


# -- characters -----------------------------------------------------------------------------------


def test_ascii_is_shown_as_is_and_the_first_code_point_past_it_is_escaped():
    assert visible("~\x7f") == "~\x7f"  # U+007E and U+007F are ASCII
    assert visible("a\x80") == "a\\u0080"
    assert visible("\u00a0") == "\\u00a0"


def test_escapes_are_four_digits_to_uffff_and_eight_above():
    assert visible("\uffff") == "\\uffff"
    assert visible("\U00010000") == "\\U00010000"
    assert visible("\U0001f600") == "\\U0001f600"


def test_the_first_non_ascii_character_of_a_text_value_is_named():
    assert str(UserError("k", "a\x7fb", "x")) == "k: 'a\\x7fb' x"  # DEL is ASCII: repr escapes it, no name
    assert str(UserError("k", "a\x80b", "x")) == "k: 'a\\x80b' (contains U+0080 an unnamed character) x"
    assert str(UserError("k", "a\u00a0b\u2011", "x")) == "k: 'a\\xa0b\\u2011' (contains U+00A0 NO-BREAK SPACE) x"
    assert str(UserError("k", ["\u2011"], "x")) == "k: ['\\u2011'] x"  # not text: no note
    assert str(UserError("k", "plain~", "x")) == "k: 'plain~' x"


def test_a_non_ascii_key_is_escaped_too():
    assert str(UserError("zon\u00e9", "a", "x")) == "zon\\u00e9: 'a' x"


# -- secrets and Outputs --------------------------------------------------------------------------


def test_a_secret_shape_is_told_from_a_plain_value():
    assert looks_secret(f"token {HF}") is True
    assert looks_secret("us-central1-b") is False


def test_under_a_secret_key_only_the_markers_and_booleans_are_shown():
    assert show("letmein", "hfToken") == "<redacted>"
    assert show(12345, "apiKey") == "<redacted>"
    assert show("<set>", "hfToken") == "'<set>'"
    assert show(True, "hfToken") == "True"
    assert show(None, "hfToken") == "None"
    assert show("letmein", "model") == "'letmein'"  # not a secret's key, not a secret's shape


def test_outputs_are_replaced_inside_mappings_lists_and_tuples():
    output = pulumi.Output.from_input("x")
    assert repr(printable(output)) == "<an Output>"
    assert repr(printable({"a": output, "b": 1})) == "{'a': <an Output>, 'b': 1}"
    assert repr(printable((output, "v"))) == "[<an Output>, 'v']"
    assert printable({"a": [1, "b"]}) == {"a": [1, "b"]}
    assert printable(7) == 7
    assert show(output) == "<an Output>"
    assert show(12) == "12" and show("12") == "'12'"


def test_a_class_named_output_elsewhere_is_a_value():
    class Output:  # noqa: D101 - not pulumi's
        def __str__(self) -> str:
            return "mine"

    assert show(Output()) == "mine"


# -- the line -------------------------------------------------------------------------------------


def test_the_line_with_and_without_a_key_a_value_and_a_fix():
    assert str(UserError("k", "v", "is bad", "use w")) == "k: 'v' is bad; use w"
    assert str(UserError("k", "v", "is bad")) == "k: 'v' is bad"
    assert str(UserError("", "v", "is bad", "use w")) == "'v' is bad; use w"
    assert str(UserError("k", MISSING, "is required", "set it")) == "k is required; set it"


# -- the key moved --------------------------------------------------------------------------------


def test_a_key_is_put_in_the_stacks_namespace_once():
    error = UserError("cluster.location", "x", "is bad", "fix")
    moved = error.in_namespace("tpu-stacks")
    assert str(moved) == "tpu-stacks:cluster.location: 'x' is bad; fix"
    assert moved.in_namespace("tpu-stacks") is moved  # already there
    full = UserError("gcp:project", "x", "is bad")
    assert full.in_namespace("tpu-stacks") is full  # another namespace's full key
    no_dots = UserError("gcp:project", "x", "is bad")
    assert no_dots.in_namespace("gcp") is no_dots
    dotted = UserError("cluster.a:b", "x", "is bad")  # a ':' past the first part is not a namespace
    assert dotted.in_namespace("tpu-stacks").key == "tpu-stacks:cluster.a:b"
    assert UserError("", "x", "is bad").in_namespace("tpu-stacks").key == "tpu-stacks"


def test_a_derived_key_is_given_back_as_the_user_wrote_it():
    keys = {"cluster.slices[0]": "vllm", "cluster.slices[0].spot": "vllm.spot"}
    assert UserError("cluster.slices[0].spot", 1, "x").rekeyed(keys).key == "vllm.spot"  # the longest match
    assert UserError("cluster.slices[0].zone", 1, "x").rekeyed(keys).key == "vllm.zone"
    assert UserError("cluster.slices[0]", 1, "x").rekeyed(keys).key == "vllm"
    assert UserError("cluster.slices[0][1]", 1, "x").rekeyed(keys).key == "vllm[1]"
    other = UserError("cluster.slices[01]", 1, "x")
    assert other.rekeyed(keys) is other  # not under the key: a longer name is another key


def test_a_key_is_put_under_a_prefix():
    assert UserError("zone", 1, "x").under("cluster").key == "cluster.zone"
    assert str(UserError("", 1, "is bad").under("cluster")) == "cluster: 1 is bad"
