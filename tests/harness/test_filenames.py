"""File names are cut in UTF-8 bytes, never inside a character."""

from __future__ import annotations

from coworkenv.harness.filenames import NAME_BYTES, cut_bytes, fit_name


def test_a_name_of_four_byte_characters_is_cut_to_whole_characters_within_255_bytes() -> None:
    name = cut_bytes("\U0001f600" * 100)
    assert name == "\U0001f600" * 63 and len(name.encode()) <= NAME_BYTES


def test_a_short_name_is_kept_as_it_is() -> None:
    assert cut_bytes("résumé") == "résumé"


def test_prefix_and_suffix_are_kept_whole_and_counted() -> None:
    name = fit_name("é" * 200, "07-", ".eval")
    assert name.startswith("07-é") and name.endswith(".eval") and len(name.encode()) <= NAME_BYTES
