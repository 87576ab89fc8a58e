"""The warning codes the docs list are the codes the simulator gives, every one and no other.

A warning's code is what a sweep's `warnings` column and `serq run --json`'s `codes` carry
(serq_sim.notes.WARNING_CODES). docs/simulator.md ("The report's warnings") lists them, and docs/sweep.md ("The
table") says what each stands for; `lease-lapsed` (b8c86719) reached docs/sweep.md's list but not
docs/simulator.md's, which named the codes of four kinds only. Checked here: every code a warning of the
simulator's source is made with is in WARNING_CODES and the reverse (the source read, not a run), and each doc
names every one of them, and no hyphenated code that is not one.
"""

from __future__ import annotations

import re
from pathlib import Path

import serq_sim
from serq_sim.notes import WARNING_CODES

ROOT = Path(__file__).resolve().parents[3]
SRC = Path(serq_sim.__file__).resolve().parent
CODES = {code for code, _words in WARNING_CODES}


def _made() -> set[str]:
    """The codes the simulator's source makes its warnings with (``warning("CODE", …)``)."""
    found = set()
    for f in SRC.rglob("*.py"):
        found |= set(re.findall(r'\bwarning\(\s*"([a-z-]+)"', f.read_text()))
    return found


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def _hyphenated(text: str) -> set[str]:
    """The names in backquotes that look like a code (lower-case words joined by hyphens)."""
    return set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", text))


def test_the_codes_made_are_the_codes_listed():
    assert _made() == CODES
    assert len(CODES) == len(WARNING_CODES) == 20


def test_docs_simulator_lists_every_code_and_no_other():
    text = (ROOT / "docs" / "simulator.md").read_text()
    listing = _between(text, "The codes (`notes.WARNING_CODES`)", "has no code.")
    for code in CODES:
        assert f"`{code}`" in listing, code
    assert _hyphenated(listing) <= CODES
    # each code is named at its kind's own paragraph too (or, for no-end, where it is said)
    section = _between(text, "### The report's warnings", "### The Python API's report")
    for code in CODES - {"no-end", "shared-turn", "cached-beyond-prompt", "unfinished-iteration"}:
        assert section.count(f"`{code}`") >= 2, code


def test_docs_sweep_lists_every_code_and_no_other():
    text = (ROOT / "docs" / "sweep.md").read_text()
    listing = _between(text, "`warnings` says which runs' reports warned", "Each warning carries its code")
    for code in CODES:
        assert f"`{code}`" in listing, code
    assert _hyphenated(listing) - {"trace-changed"} <= CODES  # (a sweep's own, of a resumed trace)
