"""docs/language.md's table of examples ("Examples (each compiles with `serq check`)") lists every program the
repository ships under examples/, the example plugins' READMEs' aside: examples/single-turn/aging.sq and the
three twins of examples/multi-turn/twins/ were left out, so a reader of the table never met them (and its
compile check, test_docs_commands.py, never compiled them from there)."""

from __future__ import annotations

import re

from host_helpers import REPO


def test_the_table_of_examples_lists_every_example_program():
    text = (REPO / "docs" / "language.md").read_text()
    table = text[text.index("Examples (each compiles"):text.index("## Lexical")]
    listed = set(re.findall(r"\]\(\.\./(examples/[^)]+\.sq)\)", table))
    shipped = {p.relative_to(REPO).as_posix() for p in (REPO / "examples").rglob("*.sq")
               if "plugins" not in p.relative_to(REPO / "examples").parts}
    assert len(shipped) >= 25
    assert shipped - listed == set(), f"docs/language.md's table of examples leaves out {sorted(shipped - listed)}"
    assert listed - shipped == set(), f"docs/language.md's table of examples lists {sorted(listed - shipped)}"
