"""Full-text search over the wiki pages and the raw sources, with a derived whoosh index.

The index lives in `.wikimem/search/` and is never the truth: `wikimem reindex`
rebuilds it from `wiki/` and `raw/`. `update_index` keeps it current
incrementally by comparing each file's size and mtime with a manifest, so calling
it before every query costs one directory walk when nothing changed.

Each document is cut into passages (a heading and the text under it, capped in
size) so a long source ranks by its best section, not by its average; results
are grouped back into one hit per file. Ranking uses what the wiki knows:
title, aliases and headings weigh more than body text; compiled pages weigh a
little more than the raw text they summarize; and within a series of documents
that differ only by a version or date in their title ("Acme 1.25 Release Notes",
"Acme 1.27 Release Notes") the newer one ranks higher, strongly so when the
question asks for the current value.

The package, by job: analysis (text to terms), documents (files to passages), index (the
derived whoosh index and keeping it current), ranking (questions to scored entries),
snippets (the sentence that answers), engine (an open index answering questions), mapped
(whoosh's segment files read from their memory map, not copied) and unchanged (the freshness
check without a walk, when no folder changed since one).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from . import spared

spared.install()  # before anything here loads whoosh

if TYPE_CHECKING:
    from .analysis import (
        KINDS,
        TOKEN,
        IdentifierParts,
        analyzer,
        identifier_parts,
        path_words,
        schema,
        stem_word,
    )
    from .documents import (
        Chunk,
        Doc,
        chunk_blocks,
        load_raw_file,
        load_wiki_page,
        raw_text_chunks,
        release_eras,
    )
    from .engine import (
        ENGINES,
        Engine,
        Hit,
        Passage,
        engine,
        opened,
        search,
        search_once,
        search_passages,
        with_current_sources,
    )
    from .index import (
        CATALOG_NAME,
        INDEX_DIR,
        INDEX_VERSION,
        PARALLEL_INDEX,
        WIKI_FOLDERS,
        IndexReport,
        Seed,
        compute_priors,
        ignored_path,
        index_dir,
        is_current,
        read_manifest,
        ready_seed,
        reindex,
        repair,
        series_key,
        start_seed,
        update_index,
        walk_files,
    )
    from .ranking import (
        FIELD_BOOSTS,
        KIND_PRIOR,
        FastScorer,
        ParsedQuery,
        build_query,
        coordination,
        parse_query,
        select_terms,
        weighting,
    )
    from .snippets import make_snippet, sentence_spans

__all__ = [
    "FIELD_BOOSTS", "INDEX_DIR", "INDEX_VERSION", "KIND_PRIOR", "KINDS", "PARALLEL_INDEX", "WIKI_FOLDERS", "Chunk",
    "Doc", "Engine", "FastScorer", "Hit", "IdentifierParts", "IndexReport", "ParsedQuery", "Passage", "Seed", "analyzer",
    "build_query", "chunk_blocks", "compute_priors", "coordination", "engine", "identifier_parts", "index_dir", "is_current",
    "load_raw_file", "load_wiki_page", "make_snippet", "opened", "parse_query", "path_words", "raw_text_chunks",
    "ready_seed", "reindex", "release_eras", "repair", "schema", "search", "search_once", "search_passages", "select_terms", "sentence_spans",
    "series_key", "start_seed", "update_index", "walk_files", "weighting", "with_current_sources", "CATALOG_NAME", "ENGINES",
    "TOKEN", "ignored_path", "read_manifest", "stem_word",
]


# each name's submodule: a submodule is imported on first use of one of its names, so a
# process that needs one part does not pay for the rest (unpickling the index's schema imports
# this package for the analyzer alone; a cold search needs no document loaders); the submodules'
# functions import what only they need, for the same reason
_HOME = {
    "analysis": ("KINDS", "TOKEN", "IdentifierParts", "stem_word", "analyzer", "identifier_parts", "path_words", "schema"),
    "documents": ("Chunk", "Doc", "chunk_blocks", "load_raw_file", "load_wiki_page", "raw_text_chunks",
                  "release_eras"),
    "engine": ("ENGINES", "Engine", "Hit", "Passage", "engine", "opened", "search", "search_once",
               "search_passages", "with_current_sources"),
    "index": ("CATALOG_NAME", "INDEX_DIR", "INDEX_VERSION", "PARALLEL_INDEX", "WIKI_FOLDERS", "IndexReport", "Seed",
              "ignored_path", "read_manifest", "compute_priors", "index_dir", "is_current", "reindex", "repair", "series_key",
              "ready_seed", "start_seed", "update_index", "walk_files"),
    "ranking": ("FIELD_BOOSTS", "KIND_PRIOR", "FastScorer", "ParsedQuery", "build_query", "coordination",
                "parse_query", "select_terms", "weighting"),
    "snippets": ("make_snippet", "sentence_spans"),
}
_MODULE_OF = {name: module for module, names in _HOME.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(f".{module}", __name__)
    for each in _HOME[module]:
        globals()[each] = getattr(loaded, each)
    return globals()[name]


class _Package(types.ModuleType):
    """This package, where the submodule `engine` never hides the function `engine`: importing a
    submodule binds it here by its name, and for that one the function of the name is bound
    instead (as when this file imported everything, in that order)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "engine" and isinstance(value, types.ModuleType):
            value = value.engine
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
