"""Every file of the repository the docs name (``packages/…``, ``examples/…``, ``docs/…``, ``bench/…``) is
there, or the doc says it was removed (```PATH``, removed``): docs/performance.md's older sections name
``bench/plain_cb.py``, a loop since removed, as a command to run (``python bench/plain_cb.py``)."""

from __future__ import annotations

import re

from host_helpers import REPO

PATH = re.compile(r"(?<![\w/.-])((?:packages|examples|docs|bench)/[\w./-]*\w)")


def docs():
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("packages/*/README.md")),
            *sorted(REPO.glob("examples/**/README.md"))]


def test_every_file_the_docs_name_is_there():
    named, gone = 0, []
    for doc in docs():
        text = doc.read_text()
        for i, line in enumerate(text.splitlines(), 1):
            for m in PATH.finditer(line):
                path = m.group(1)
                if "…" in path:
                    continue
                named += 1
                if not (REPO / path).exists() and f"`{path}`, removed" not in text:
                    gone.append(f"{doc.relative_to(REPO)}:{i}: {path}")
    assert named >= 300
    assert not gone, gone
