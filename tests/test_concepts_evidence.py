"""What counts as evidence that a source names a thing: the rules that decide a concept
candidate's signals (analysis.py), each on a small fixture written for the rule; the set it
was seen on is named in the test."""

from __future__ import annotations

from pathlib import Path

from wikimem.analysis import DEFINED, HEADED, analyze, code_token
from wikimem.sources import load_source


def _signals(tmp_path: Path, name: str, text: str) -> dict[str, list[object]]:
    source = tmp_path / name
    source.write_text(text)
    return analyze(load_source(source, f"raw/{name}", max_bytes=1_000_000)).signals


def test_a_name_emphasized_once_and_never_said_again_is_no_term(tmp_path: Path) -> None:
    """A quote's bold attribution ("**Carl Meyer**, Django core developer:", Black's README)
    made a page for each person; a term the author introduces is said again."""
    signals = _signals(tmp_path, "praise.md", (
        "# Praise\n\nWhat people say about the formatter.\n\n"
        "**Ada Lovelace**, core developer:\n\n> It formats everything.\n\n"
        "The *canary release* sends a small share of traffic to the new version. "
        "A canary release that fails is rolled back.\n"))
    assert "ada lovelace" not in signals
    assert signals["canary release"][0] == HEADED


def test_a_heading_that_is_only_a_name_in_code_is_its_reference_entry(tmp_path: Path) -> None:
    """An option reference whose headings are the options ("#### `-l`, `--line-length`",
    Black's usage page) gave them no signal at all: the entry's text says what the option does,
    not its name again. A section headed by a code name defines the name."""
    signals = _signals(tmp_path, "options.md", (
        "# Options\n\nThe command takes these options.\n\n"
        "## `-l`, `--line-length`\n\nHow many characters per line to allow. The default is 88.\n\n"
        "## `--fast` / `--safe`\n\nSkip the check that the output is equivalent.\n\n"
        "## `Session`\n\nKeeps connections open between calls.\n\n"
        "## Using `run()` in tests\n\nCall it once.\n"))
    assert signals["--line-length"] == [DEFINED, "`--line-length`"]
    assert signals["--fast"][0] == DEFINED and signals["--safe"][0] == DEFINED
    assert signals["session"][0] == DEFINED
    assert "run" not in signals  # words beside the code: a section about using it, no entry


def test_an_unmarked_heading_that_is_one_identifier_is_its_reference_entry(tmp_path: Path) -> None:
    """A settings reference whose headings are the names unmarked ("DOWNLOAD_DELAY" in Scrapy's
    reStructuredText, no backquotes) read as words: no entry, so no page led by the entry. One
    identifier as only code writes it is the name's entry; a word, a name in capitals inside
    prose ("JavaScript") or a version is not."""
    from wikimem.analysis import entry_names

    signals = _signals(tmp_path, "settings.rst", (
        "Settings\n========\n\nThe tool reads these.\n\nMAX_RETRIES\n-----------\n\nDefault: ``3``\n\n"
        "How many times a fetch is tried again.\n\nSession.close()\n---------------\n\nEnds the session.\n\n"
        "Overview\n--------\n\nThe overview of the settings.\n"))
    assert signals["max_retries"] == [DEFINED, "`MAX_RETRIES`"]
    assert signals["session.close"][0] == DEFINED
    assert entry_names("MAX_RETRIES") == [("max_retries", "`MAX_RETRIES`")]
    for word in ("Overview", "FAQ", "JavaScript", "v1.2.3", "README.md", "setup.py", "Two words_here"):
        assert entry_names(word, lambda name: False) == [], word  # the section writes none of them as code


def test_a_heading_in_capitals_inside_is_an_entry_where_its_section_writes_it_as_code(tmp_path: Path) -> None:
    """A reference whose headings are its classes, unmarked ("### JSONResponse", "## CORSMiddleware"
    in Starlette's Markdown docs), gave them no entry, and none a page. Such a name is the
    section's entry where the section writes it as code (its import, a span); "GitHub" as a
    section of prose is not."""
    signals = _signals(tmp_path, "responses.md", (
        "# Responses\n\nWhat a handler returns.\n\n## ShaftResponse\n\nReturns a shaft's state.\n\n"
        "```python\nfrom gearbox.responses import ShaftResponse\n```\n\n## GearBox\n\nA `GearBox()` holds gears.\n\n"
        "## GitHub\n\nThe code lives on GitHub, where issues are filed.\n"))
    assert signals["shaftresponse"] == [DEFINED, "`ShaftResponse`"]
    assert signals["gearbox"][0] == DEFINED
    assert signals.get("github", [0])[0] != DEFINED


def test_a_release_section_headed_by_a_name_lists_its_changes_and_defines_nothing(tmp_path: Path) -> None:
    """Release notes head a section per component ("`django.contrib.admin`", Django's 1.8
    notes): what changed in it, not its entry."""
    signals = _signals(tmp_path, "changes.md", (
        "# Changelog\n\n## 2.0.0 (2024-01-02)\n\n### `pkg.admin`\n\n- The admin gained a search box.\n"
        "- The admin lists filters.\n\n## 1.9.0 (2023-05-06)\n\n- The admin was sped up.\n"))
    assert signals.get("pkg.admin", [0])[0] != DEFINED


def test_a_long_option_is_a_name_in_code() -> None:
    assert code_token("--line-length") == "--line-length"
    assert code_token("--check") == "--check"
    assert code_token("-l") is None
    assert code_token("--") is None


def test_a_member_described_inside_its_owners_entry_is_weaker_evidence_than_the_owner(tmp_path: Path) -> None:
    """A reference that describes methods inside their class's entry (aiohttp's client
    reference: `.. method:: send_frame` in `.. class:: ClientWebSocketResponse`) made pages for
    the methods ("send-frame", "filter-cookies") and none for classes (TCPConnector): the class
    is what the reference is organised around, its members are found on its page."""
    signals = _signals(tmp_path, "reference.rst", (
        "Reference\n=========\n\n"
        ".. class:: Connector(limit=100)\n\n   Opens connections.\n\n"
        "   .. method:: close_all()\n\n      Closes every connection.\n\n"
        "   .. attribute:: limit\n\n      How many connections at most.\n\n"
        ".. function:: open_connection(url)\n\n   Opens one connection.\n"))
    assert signals["connector"][0] == DEFINED
    assert signals["open_connection"][0] == DEFINED
    assert signals["close_all"][0] == HEADED
    assert signals["limit"][0] == HEADED


def test_a_section_named_for_a_topic_two_more_sources_return_to_is_a_concept() -> None:
    """The topics a user guide heads a section for ("Retrying Requests", "Timeouts" in
    urllib3's; "Naming Conventions" in Alembic's cookbook) were never candidates: one section
    heading was too little evidence, however many other sources came back to the topic. A
    heading in one source and two more sources that say it is enough; code marks alone are not."""
    from wikimem.backends.offline_concepts import eligible

    n = 13
    assert eligible(n, df=3, strength=3, signal_docs=1, strong_docs=0)  # one heading, two more say it
    assert eligible(n, df=4, strength=5, signal_docs=2, strong_docs=0)  # a heading and a code mark
    assert not eligible(n, df=2, strength=3, signal_docs=1, strong_docs=0)  # said nowhere else
    assert not eligible(n, df=5, strength=4, signal_docs=2, strong_docs=0)  # marked as code twice only
    assert not eligible(n, df=12, strength=3, signal_docs=1, strong_docs=0)  # a word nearly every source says


def test_an_acronym_written_before_a_number_cites_a_series_and_names_no_thing(tmp_path: Path) -> None:
    """"PEP 484", "PEP 561" made a page "PEP" in most Python sets (Black's, Hatch's, pip's): the
    acronym names the documents of a series, each cited by its number; TLS, said alone, is a
    thing."""
    from wikimem.analysis import CODE

    signals = _signals(tmp_path, "typing.md", (
        "# Typing\n\nThe checker follows PEP 484 for annotations. Stubs follow PEP 561. "
        "Connections use TLS by default. TLS certificates are verified.\n"))
    assert "pep" not in signals
    assert signals["tls"][0] == CODE


def test_the_first_word_of_a_hyphenated_heading_is_no_thing_alone(tmp_path: Path) -> None:
    """ "Free-threading Is Experimental" (an unseen set's caveats page) made a concept page
    "Free": the heading is about free-threading, and "free" alone is a fragment of it. Said on
    its own in a heading, the word still counts."""
    text = ("# Caveats\n\nWhat to know first.\n\n## Free-threading Is Experimental\n\n"
            "Free-threading support is new. Free-threading builds need care. Free memory is released.\n")
    signals = _signals(tmp_path, "caveats.md", text)
    assert "free" not in signals
    assert "free threading" in signals
    signals = _signals(tmp_path, "memory.md", text.replace("## Free-threading Is Experimental",
                                                           "## Free-threading and free memory"))
    assert "free" in signals
