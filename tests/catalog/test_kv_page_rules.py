"""catalog/kv_pages.tpu_page_size where the SMEM raise lands between two powers of two.

tpu-inference 0.29.0 (ledger: tpu-inference.page-size.smem-pages, tpu-inference.page-size.smem-raise): a request's
block table may take half of 1 MiB of SMEM in int32 entries, so 1,024 sequences get 1,048,576 / 2 / 1,024 / 4 = 128
pages each; the page is then at least max-model-len / 128 rounded up to a power of two.
"""

from tpu_stacks.catalog.kv_pages import tpu_page_size


def test_sixty_five_pages_round_up_to_128_tokens_a_page():
    """8,320 tokens (past the 8,192-token long-context line, so the 16-token floor) over 128 pages: 65 tokens a page,
    raised to the next power of two, 128."""
    assert tpu_page_size(8320, 1024) == 128


def test_a_whole_power_of_two_of_pages_is_kept():
    """16,384 tokens over 128 pages: exactly 128 tokens a page, already a power of two."""
    assert tpu_page_size(16384, 1024) == 128
