"""The citation keys' look-ups, each on a sentence written here: which keys a text cites, which resolve, the
addresses and footnotes a CLI prints, and docs/sources.md as `python -m tpu_stacks.sources` writes it.

The expected addresses are the ones docs/sources.md lists for [GIQ] and [NEO] (GKE Inference Quickstart's proto at
googleapis/googleapis 731d7f2a; Neowin on Trillium's GA), and [V] and [I] are the two labels it defines.
"""

import subprocess
import sys

from tpu_stacks import sources

GIQ = (
    "https://github.com/googleapis/googleapis/blob/731d7f2ab6e4e2ea15030c95039e2cb66174d4fb/google/cloud/"
    "gkerecommender/v1/gkerecommender.proto"
)
NEO = "https://www.neowin.net/amp/google-takes-on-nvidia-blackwell-gpus-with-the-new-trillium-tpus/"
UNLISTED = "NOT-" + "LISTED"  # built, so this file cites no key that resolves nowhere (tests/test_sources.py)
TEXT = f"Priced per [NEO] [V], the cost split as [GIQ] defines it, again [NEO]; [{UNLISTED}] and [I]."


def test_keys_are_read_in_order_with_repeats_and_without_brackets():
    assert sources.keys_in(TEXT) == ["NEO", "V", "GIQ", "NEO", "NOT-LISTED", "I"]


def test_a_key_resolves_as_a_source_or_a_label_and_nothing_else_does():
    assert sources.resolves("GIQ") is True
    assert sources.resolves("V") is True  # a label, not a source
    assert sources.resolves(UNLISTED) is False


def test_addresses_and_footnotes_list_each_source_once_first_use_first_labels_left_out():
    assert sources.addresses(TEXT) == {"NEO": NEO, "GIQ": GIQ}
    assert list(sources.addresses(TEXT)) == ["NEO", "GIQ"]
    assert sources.footnotes(TEXT) == [
        f"[NEO] Neowin on Trillium's general availability, quoting Google's GA announcement (Dec 2024): {NEO}",
        "[GIQ] googleapis/googleapis google/cloud/gkerecommender/v1/gkerecommender.proto (GKE Inference "
        f"Quickstart), commit 731d7f2a: {GIQ}",
    ]


def test_the_module_run_as_a_script_writes_the_sources_page():
    text = sources.markdown()
    assert text.startswith("# Sources\n") and text.endswith(".\n") and not text.endswith("\n\n")
    assert f"| [GIQ] | {sources.BY_KEY['GIQ'].title} | <{GIQ}> |" in text.splitlines()
    written = subprocess.run(
        [sys.executable, "-m", "tpu_stacks.sources"], capture_output=True, text=True, check=True
    ).stdout
    assert written == text
