"""The library internals wikimem patches or subclasses are the ones its patches were written for.

sources/rst.py swaps parts of docutils' state machine and inliner for the time of a parse,
sources/markdown.py asks a question before markdown-it's setext heading rule and
runs its paragraph rule asking one before the rules that end a paragraph, and
search/index.py subclasses whoosh's segment writer and codec and writes its files with whoosh's
own packing (an ID field's posting made as whoosh's field, format and tokenizer make it).
pyproject.toml bounds docutils and whoosh from above; this test fails, saying what changed, when
an installed version (even a patch release within the bounds) changes the source of anything
patched, or drops a name the patches use. Then: read the upstream change, make the
patch do what the new original does, and record the new fingerprint here.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from importlib.metadata import version

import pytest

# (module, attribute path) -> fingerprint of its source (sha256, first 12 hex digits); None for a
# name that is only used (a constant, a class the code calls), whose presence is checked
DOCUTILS = {
    ("docutils.statemachine", "State.make_transitions"): "5d8fb6139c3d",
    ("docutils.statemachine", "StateMachine.check_line"): "a978bb2b8ba7",
    ("docutils.statemachine", "StateMachine.next_line"): "21dec1957223",
    ("docutils.statemachine", "StateMachine.runtime_init"): "0c660c9f5324",
    ("docutils.parsers.rst.states", "RSTState.nested_list_parse"): "a9df2dec0471",
    ("docutils.parsers.rst.states", "Inliner.init_customizations"): "45838ea7eb9e",
    ("docutils.parsers.rst.states", "Inliner.implicit_inline"): "e9ab0c6365c8",
    ("docutils.parsers.rst.directives", "directive"): "49876a257453",
    ("docutils.nodes", "Node.setup_child"): "e4d4c187fb94",
    ("docutils.nodes", "unescape"): "34ad5b021d37",
    ("docutils.utils", "assemble_option_dict"): "89bbfd7fd807",
    # what iterating a ViewList did (it defines no __iter__): its __getitem__ with 0, 1, 2, ...
    ("docutils.statemachine", "ViewList.__getitem__"): "e157630ccbc9",
    ("docutils.parsers.rst.directives.misc", "Class"): None,
    ("docutils.parsers.rst", "Parser"): None,
}
WHOOSH = {
    ("whoosh.writing", "SegmentWriter.add_document"): "399433d1cb30",
    ("whoosh.writing", "SegmentWriter._process_posts"): "3474b19f7f67",
    ("whoosh.writing", "PostingPool.add"): "6b73def05000",
    ("whoosh.codec.base", "FieldWriter.add_postings"): "fea6bedbce63",
    ("whoosh.codec.whoosh3", "W3FieldWriter.start_field"): "14b57944c4ae",
    ("whoosh.codec.whoosh3", "W3PostingsWriter.add_posting"): "09bb36fe5125",
    ("whoosh.codec.whoosh3", "W3PerDocReader.doc_field_length"): "6f6c39c338eb",
    ("whoosh.codec.whoosh3", "W3FieldWriter.add"): "903b771bc797",
    ("whoosh.codec.whoosh3", "W3FieldWriter.finish_term"): "ead26346d814",
    ("whoosh.codec.whoosh3", "W3TermInfo.to_bytes"): "182103aeda37",
    ("whoosh.codec.whoosh3", "_lenfield"): "efa07a8a57fa",
    ("whoosh.fields", "FieldType.index"): "66eb1f868224",
    ("whoosh.formats", "Existence.word_values"): "dd820da59a36",
    ("whoosh.analysis.tokenizers", "IDTokenizer.__call__"): "63c12c40e518",
    ("whoosh.codec.whoosh3", "W3Codec"): None,
    ("whoosh.codec.whoosh3", "W3PerDocWriter"): None,
    ("whoosh.codec.whoosh3", "LENGTHS_COLUMN"): None,
    ("whoosh.codec.whoosh3", "WHOOSH3_HEADER_MAGIC"): None,
    ("whoosh.codec.base", "OutOfOrderError"): None,
    ("whoosh.filedb.filetables", "_lengths"): None,
    ("whoosh.filedb.filestore", "FileStorage"): None,
    ("whoosh.index", "_DEF_INDEX_NAME"): None,
    ("whoosh.index", "TOC"): None,
    ("whoosh.index", "LockError"): None,
    ("whoosh.system", "pack_uint"): None,
    ("whoosh.system", "pack_int"): None,
    ("whoosh.system", "pack_long"): None,
    ("whoosh.system", "pack_ushort"): None,
    ("whoosh.util.numeric", "byte_to_length"): None,
    ("whoosh.util.numeric", "length_to_byte"): None,
    ("whoosh.columns", "PickleColumn"): None,
    ("whoosh.columns", "CompressedBytesColumn"): None,
}

MARKDOWN_IT = {
    ("markdown_it.rules_block.lheading", "lheading"): "fe2975a75a39",
    ("markdown_it.rules_block.paragraph", "paragraph"): "252d4e2c8831",
    ("markdown_it.rules_block", "lheading"): None,
    ("markdown_it.common.utils", "mdTrim"): None,
    # the rules that can end a paragraph, each matching only lines that open with one of the
    # characters sources/markdown.py's paragraph rule asks about first
    ("markdown_it.rules_block.table", "table"): "b096f8abe5a0",
    ("markdown_it.rules_block.fence", "make_fence_rule"): "904d28537ba5",
    ("markdown_it.rules_block.blockquote", "blockquote"): "1968fd47b0b3",
    ("markdown_it.rules_block.hr", "hr"): "7cdd114327ca",
    ("markdown_it.rules_block.list", "list_block"): "8314bd73148c",
    ("markdown_it.rules_block.list", "skipBulletListMarker"): "b4f699249043",
    ("markdown_it.rules_block.list", "skipOrderedListMarker"): "1ed0fc512baf",
    ("markdown_it.rules_block.html_block", "html_block"): "456ffdd65890",
    ("markdown_it.rules_block.heading", "heading"): "cf98983ffc8f",
    # the rules asked only about the lines they can match (sources.markdown._BLOCK_OPENS): those
    # above and these, each checking the first character (or the indent) before any change
    ("markdown_it.rules_block.reference", "reference"): "6fb16dfa69af",
    ("markdown_it.rules_block.code", "code"): "cf6ef385eaeb",
    ("markdown_it.rules_block.state_block", "StateBlock.is_code_block"): "95fe570ab24d",
    # normalize, run only on a text it changes; text_join, off: it runs before any inline run is parsed
    ("markdown_it.rules_core.normalize", "normalize"): "71b29c0f3e02",
    ("markdown_it.rules_core.text_join", "text_join"): "b18dfe4edc66",
    # the text rule stops where the enabled inline rules open (sources.markdown._RULE_OPENS),
    # and where a link label's scan (skipToken, run on from the text rule's stop) must see `]`
    ("markdown_it.rules_inline.text", "text"): "04f43125e9ac",
    ("markdown_it.parser_inline", "ParserInline.tokenize"): "20437a24f834",
    ("markdown_it.parser_inline", "ParserInline.skipToken"): "f83d6241b825",
    ("markdown_it.parser_inline", "_default_terminator_re"): None,
    ("markdown_it.helpers.parse_link_label", "parseLinkLabel"): "0ede8bbe9674",
    ("markdown_it.rules_inline.newline", "newline"): "c75c6a7832fc",
    ("markdown_it.rules_inline.escape", "escape"): "1797fccad4fa",
    ("markdown_it.rules_inline.backticks", "backtick"): "509e73e4bcfe",
    ("markdown_it.rules_inline.strikethrough", "tokenize"): "7e3c0e5f41f3",
    ("markdown_it.rules_inline.emphasis", "tokenize"): "0615c8be9117",
    ("markdown_it.rules_inline.link", "link"): "2660e61ee934",
    ("markdown_it.rules_inline.image", "image"): "d62e611f0b57",
    ("markdown_it.rules_inline.autolink", "autolink"): "b6851a05ecfc",
    ("markdown_it.rules_inline.html_inline", "html_inline"): "270b89dadc03",
    ("markdown_it.rules_inline.entity", "entity"): "77870fc69f35",
}
MDIT_PLUGINS = {
    ("mdit_py_plugins.footnote.index", "footnote_def"): "e6b7cd6d1521",
    ("mdit_py_plugins.deflist.index", "deflist_plugin"): "d32555d16955",
    ("mdit_py_plugins.footnote.index", "footnote_inline"): "df7327fd0c3f",
    ("mdit_py_plugins.footnote.index", "footnote_ref"): "5305b17794e3",
}


def fingerprint(module: str, path: str) -> str | None:
    """The named object's source fingerprint; raises LookupError when the name is gone."""
    obj = importlib.import_module(module)
    for part in path.split("."):
        if not hasattr(obj, part):
            raise LookupError(f"{module}.{path} is gone")
        obj = getattr(obj, part)
    try:
        source = inspect.getsource(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode()).hexdigest()[:12]


@pytest.mark.parametrize(("library", "table", "patcher"), [
    ("docutils", DOCUTILS, "daemon/wikimem/sources/rst.py"),
    ("whoosh-reloaded", WHOOSH, "daemon/wikimem/search/index.py"),
    ("markdown-it-py", MARKDOWN_IT, "daemon/wikimem/sources/markdown.py"),
    ("mdit-py-plugins", MDIT_PLUGINS, "daemon/wikimem/sources/markdown.py"),
])
def test_the_patched_internals_are_the_ones_the_patches_expect(library: str, table: dict, patcher: str) -> None:
    changed = []
    for (module, path), expected in table.items():
        try:
            found = fingerprint(module, path)
        except (LookupError, ImportError) as exc:
            changed.append(f"{module}.{path}: {exc}")
            continue
        if expected is not None and found != expected:
            changed.append(f"{module}.{path}: source changed (fingerprint {found}, the patch was written for {expected})")
    assert not changed, (
        f"{library} {version(library)} changed what {patcher} patches; read the upstream change, make the "
        "patch do what the new original does, then record the new fingerprints in "
        "tests/test_patched_internals.py:\n  " + "\n  ".join(changed))


def test_pyproject_bounds_the_patched_libraries_from_above() -> None:
    """An upper bound at the next release not tested: a new docutils or whoosh comes in by a
    deliberate change that runs the test above, never by a fresh install."""
    import re
    from pathlib import Path

    text = (Path(__file__).parent.parent / "pyproject.toml").read_text()
    for name in ("docutils", "whoosh-reloaded"):
        spec = re.search(rf'"{name}([^"]*)"', text)
        assert spec and "<" in spec.group(1), f"pyproject.toml: {name} has no upper bound"


def test_the_rest_reader_works_with_a_state_machine_that_takes_no_parent_argument(monkeypatch) -> None:
    """docutils before 0.21 (which pyproject.toml admits) makes a nested state machine without
    a `parent_state_machine` argument: passing one made every reST file of a set fail with a
    TypeError and be read as plain text, on a machine whose docutils was 0.19."""
    from docutils.parsers.rst import states

    from wikimem.sources import rst

    made = states.NestedStateMachine.__init__

    def older(self, state_classes, initial_state, debug=False, **given):
        # docutils 0.19 takes no `parent_state_machine`; this docutils passes its own parse's
        # machine, so only a call that gives it without one (the reader's) is refused
        if "parent_state_machine" in given and given["parent_state_machine"] is None:
            raise TypeError("__init__() got an unexpected keyword argument 'parent_state_machine'")
        made(self, state_classes, initial_state, debug=debug, **given)

    monkeypatch.setattr(states.NestedStateMachine, "__init__", older)
    monkeypatch.setattr(rst, "_MACHINES", {})  # no machine made before the patch is reused
    result = rst.parse_rst("Title\n=====\n\n- one item\n- another item\n\nterm\n   its definition\n", 0)
    assert [b.kind for b in result.blocks] == ["heading", "item", "item", "term", "para"]


def test_the_pool_of_nested_state_machines_is_keyed_by_their_state_classes(monkeypatch) -> None:
    """A pooled machine was found by the id() of its list of state classes: a list freed within a
    parse may leave its id to a list of other classes, and a machine of the wrong states parsed
    the next list (a document's later sections at the wrong level, in some runs only)."""
    from wikimem.sources import rst

    seen: list[tuple] = []

    class Recording(dict):
        def setdefault(self, key, default=None):  # type: ignore[override]
            seen.append(key)
            return super().setdefault(key, default)

    monkeypatch.setattr(rst, "_MACHINES", Recording())
    text = "Title\n=====\n\n- one\n- two\n\nterm\n   definition\n\n:field: value\n\nSection\n-------\n\n- three\n"
    rst.parse_rst(text)
    assert seen and all(isinstance(key[2], tuple) and all(isinstance(c, type) for c in key[2]) for key in seen)
