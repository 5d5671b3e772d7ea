"""whoosh loads without the three modules it imports and never uses (search/spared.py), and
whatever imports them later gets the real ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

DAEMON = Path(__file__).resolve().parents[1] / "daemon"


def run(code: str) -> dict:
    env = {"PYTHONPATH": str(DAEMON), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_search_loads_whoosh_without_urllib_request_or_asyncio(tmp_path):
    (tmp_path / "page.html").write_text("<p>local</p>", encoding="utf-8")
    got = run(f"""
        import json, sys
        from wikimem import search
        from wikimem.workspace import Workspace
        from wikimem.init import init_workspace
        ws = Workspace.at({str(tmp_path / 'ws')!r})
        init_workspace(ws)
        (ws.raw / "note.md").write_text("# Kettle\\n\\nThe kettle boils water.\\n", encoding="utf-8")
        search.update_index(ws)
        hits = search.search_passages(ws, "kettle")
        from whoosh import compat, reading
        spared = [m for m in ("urllib.request", "cached_property", "asyncio", "ssl", "whoosh.lang.morph_en")
                  if m in sys.modules]
        from whoosh.query import terms
        forms = sorted(terms.variations("render"))
        # imported later, the real modules; whoosh's helper reaches the real one (a local file URL)
        import urllib.request, cached_property
        copied, _ = compat.urlretrieve("file://{tmp_path / 'page.html'}", {str(tmp_path / 'copy.html')!r})
        print(json.dumps({{"hits": [h.hit.path for h in hits], "spared": spared,
                          "urlopen": hasattr(urllib.request, "urlopen"),
                          "package": cached_property.cached_property.__module__,
                          "reader_property": type(reading.SegmentReader.__dict__["deleted_docs_set"]).__module__,
                          "copied": open(copied).read(), "forms": forms}}))
    """)
    assert got["hits"] and got["hits"][0].endswith("note.md")
    assert got["spared"] == []
    assert got["urlopen"] and got["package"] == "cached_property"
    assert got["reader_property"] == "functools"
    assert got["copied"] == "<p>local</p>"
    assert "rendered" in got["forms"] and "renders" in got["forms"]  # the real word forms, loaded when asked


def test_whoosh_loads_as_it_did_where_the_real_modules_are_loaded_first():
    got = run("""
        import json, urllib.request, cached_property
        from wikimem import search
        from whoosh import compat, reading
        print(json.dumps({"urlretrieve": compat.urlretrieve is urllib.request.urlretrieve,
                          "property": type(reading.SegmentReader.__dict__["deleted_docs_set"]).__module__}))
    """)
    assert got == {"urlretrieve": True, "property": "cached_property"}


def test_a_stand_in_answers_any_other_name_from_the_real_module():
    got = run("""
        import json, sys
        from wikimem.search import spared
        ours = spared.STAND_INS["whoosh.compat"][1]["urlretrieve"]
        stand_in = spared._stand_in("urllib.request", {"urlretrieve": ours})
        sys.modules["urllib.request"] = stand_in
        # the import system's questions load nothing (every `from ... import` asks for __path__)
        from urllib.request import urlretrieve
        asked = hasattr(stand_in, "__path__")
        loaded_then = sys.modules["urllib.request"] is not stand_in
        got = stand_in.getproxies  # another thread's import while whoosh loads
        print(json.dumps({"asked": asked, "loaded_then": loaded_then, "real": sys.modules["urllib.request"] is not stand_in,
                          "same": got is sys.modules["urllib.request"].getproxies,
                          "ours": urlretrieve is ours}))
    """)
    assert got == {"asked": False, "loaded_then": False, "real": True, "same": True, "ours": True}


@pytest.mark.parametrize("module", ["whoosh.compat", "whoosh.reading", "whoosh.query.terms"])
def test_tracebacks_read_whooshs_source_through_the_loader(module):
    got = run(f"""
        import json, importlib, inspect
        from wikimem import search
        m = importlib.import_module({module!r})
        print(json.dumps({{"source": len(inspect.getsource(m)) > 100, "file": m.__file__.endswith(".py")}}))
    """)
    assert got == {"source": True, "file": True}
