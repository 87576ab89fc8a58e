"""README.md names every environment variable serQ reads (``"SERQ_…"`` in the parts' code), each with what it
does and where it is described; no doc listed them in one place, and SERQ_TRACE_ITER was described nowhere
but in a code comment. A variable the README names is one the code reads."""

from __future__ import annotations

import re

from host_helpers import REPO


def test_the_readme_names_every_environment_variable_serq_reads():
    read = set()
    for path in REPO.glob("packages/*/src/**/*.py"):
        read.update(re.findall(r"[\"'](SERQ_[A-Z_]+)[\"']", path.read_text()))
    assert {"SERQ_PATH", "SERQ_CACHE_DIR", "SERQ_SIM_TIER"} <= read
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## Environment variables"):readme.index("## Documentation")]
    named = set(re.findall(r"`(SERQ_[A-Z_]+)`", section))
    assert read - named == set(), f"README.md's environment variables leave out {sorted(read - named)}"
    assert named - read == set(), f"README.md names {sorted(named - read)}, which no part reads"
    # each row of the table says where the variable is described, and that place is there
    for row in re.findall(r"^\| `SERQ_[A-Z_]+` \|.*\| (.+) \|$", section, re.M):
        m = re.fullmatch(r"((?:docs|packages)/[\w./-]+)(?:, \"(.+)\")?", row)
        assert m and (REPO / m.group(1)).is_file(), row
        if m.group(2):
            assert m.group(2) in " ".join((REPO / m.group(1)).read_text().split()), row
