"""docs/simulator.md's example of the not-steady warning whose live sessions are not waiting is what the run
it names says, on both tiers.

The example ("The report's warnings", Not steady) quotes the warning's last sentence with its figures (8.992
of the mean 9.571 live sessions in delay stages, `tool` 8.875 and `api` 0.1166, 0.138 queued): the words came
with 15a99111, and no test held the doc's figures to the run they are of, the replay of
peer_programs35/replay_2x.sq at its defaults. Each piece of the quote between its elisions (``…``) is looked
for in the warning, in order.
"""

from __future__ import annotations

import re
from pathlib import Path

import serq_frontend
from peers import run_both

ROOT = Path(__file__).resolve().parents[3]
PROGRAM = Path(__file__).parent / "peer_programs35" / "replay_2x.sq"


def _quote() -> list[str]:
    """The doc's quote of the warning, one space for each run of blanks, split at its elisions."""
    text = re.sub(r"\s+", " ", (ROOT / "docs" / "simulator.md").read_text())
    (quote,) = re.findall(r"``(The live sessions are not waiting: .*?)``", text)
    return [piece.strip() for piece in quote.split("…")]


def test_the_quote_is_of_the_replay_at_its_defaults(monkeypatch):
    pieces = _quote()
    assert pieces[0].startswith("The live sessions are not waiting: 8.992 of their mean 9.571 are in delay stages")
    assert len(pieces) == 2
    doc, _ = run_both(serq_frontend.compile(path=str(PROGRAM)), monkeypatch)
    (note,) = [n for n in doc["notes"] if n.startswith("warning: the run is not steady: ")]
    at = 0
    for piece in pieces:
        found = note.find(piece, at)
        assert found >= 0, (piece, note)
        at = found + len(piece)
    assert note.endswith(pieces[-1]), note
