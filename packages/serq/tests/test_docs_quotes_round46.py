"""Messages the docs quote are what serQ says, each quote a whole clause of the message.

Two quotes had gone stale without a test failing: docs/simulator.md's refusal of a SERQ_MEMORY_SHARE too small
ended ``or 'off'`` where the message goes on ``or 'off' in any case`` (43c36f7c), and docs/vllm.md's warning of
an offload tier named ``offload.sq:29:69``, a line of peer_programs13/offload.sq two lines above its spill. The
truth is the doc's text; the message is made here for the case the doc describes.
"""

from __future__ import annotations

import re
import resource
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MIB = 2**20


def _flat(doc: str) -> str:
    """A doc's text with its line breaks and runs of blanks as one blank, as a quote across lines reads."""
    return " ".join((ROOT / "docs" / doc).read_text(encoding="utf-8").split())


def _machine(monkeypatch, tmp_path, free: int) -> None:
    """No ulimit, 10 pages of 4 096 bytes resident, ``free`` bytes available, one run at a time."""
    from serq_sim import memguard

    statm = tmp_path / "statm"
    statm.write_text("1000 10 10 10 0 400 0\n")
    monkeypatch.setattr(memguard, "_STATM", str(statm))
    monkeypatch.setattr(memguard.os, "sysconf", lambda name: 4096)
    monkeypatch.setattr(resource, "getrlimit", lambda rl: (resource.RLIM_INFINITY,) * 2)
    monkeypatch.setattr(memguard, "available", lambda: (free, memguard.MACHINE))
    monkeypatch.delenv("SERQ_MEMORY_WORKERS", raising=False)


def test_docs_simulator_md_quotes_the_share_refusals_clause_whole(monkeypatch, tmp_path):
    # docs/simulator.md, `memory`: "the message says the shares this machine takes, `on this machine a number
    # from 0.000694 to 1, or 'off' in any case`"; on a machine of 8 GiB available the least share taken is
    # 16 MiB / 8192 MiB = 0.001953125, shown rounded up to 3 digits, 0.00196
    from serq.errors import UserError
    from serq_sim import memguard

    said = re.search(r"the message says the shares this machine takes, `(on this machine a number from )([0-9.]+)"
                     r"( to 1, [^`]*)`", _flat("simulator.md"))
    assert said, "docs/simulator.md quotes the shares this machine takes"
    quote = said.group(1) + "0.00196" + said.group(3)
    _machine(monkeypatch, tmp_path, 8192 * MIB)
    monkeypatch.setenv("SERQ_MEMORY_SHARE", "1e-320")
    with pytest.raises(UserError) as e:
        memguard.memory_guard()
    message = str(e.value)
    assert quote in message
    # the quote is the clause whole: what follows it in the message is the parenthesis that explains it
    assert message[message.index(quote) + len(quote):].startswith(" (no bound but a ulimit's): ")


def test_docs_vllm_md_quotes_the_offload_tiers_warning_as_the_target_says_it():
    # docs/vllm.md, "serq vllm target": the warning of a memory pool that spills to a tier, quoted whole on a
    # line of its own, of packages/serq-vllm/tests/peer_programs13/offload.sq, named by its file's name
    import serq_frontend
    from serq_vllm.target import target

    path = ROOT / "packages" / "serq-vllm" / "tests" / "peer_programs13" / "offload.sq"
    lines = path.read_text(encoding="utf-8").splitlines()
    # the place by hand: the clause `cpu via pcie …` after the word spill, its line and column counted from 1
    line = next(i for i, x in enumerate(lines, 1) if "spill cpu" in x)
    col = lines[line - 1].index("spill cpu") + len("spill ") + 1
    warnings = target(serq_frontend.compile(path=str(path)), str(path))["warnings"]
    spill = [w for w in warnings if "spills the blocks it evicts" in w]
    assert len(spill) == 1
    assert f"(at {path}:{line}:{col})" in spill[0]
    said = "warning: " + spill[0].replace(f"{path}:", "offload.sq:")
    doc = (ROOT / "docs" / "vllm.md").read_text(encoding="utf-8").splitlines()
    assert said in doc
