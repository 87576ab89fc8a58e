"""Any subset of the packages' test folders runs in one pytest: the tests are imported by path
(``--import-mode=importlib``), and each folder's conftest puts the folder on ``sys.path`` for its helper
modules, so a name that is imported (rather than collected) must mean one file whichever folders run.
Importing a test module by name (``from test_cli import …``) found the first ``test_cli`` on the path,
another package's when both folders ran."""

from __future__ import annotations

import ast
import subprocess
import sys

from host_helpers import REPO

TESTS = sorted(p for p in (REPO / "packages").glob("*/tests/**/*.py"))


def _imported(path) -> set[str]:
    """The top-level names of the modules ``path`` imports, wherever its imports stand. An import is a statement:
    only the statements are walked (the bodies of functions, classes, branches, loops, withs, trys and matches),
    not their expressions, which ast.walk visited too (twice the time)."""
    names = set()
    todo = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                todo.extend(getattr(node, field, ()))
    return names


def test_no_test_module_imports_a_test_module():
    test_modules = {p.stem for p in TESTS if p.stem.startswith("test_")}
    wrong = {str(p.relative_to(REPO)): sorted(_imported(p) & test_modules) for p in TESTS}
    assert not {k: v for k, v in wrong.items() if v}, "move what is shared into a helper module"


def test_helper_modules_have_names_of_their_own():
    helpers: dict[str, list[str]] = {}
    for p in TESTS:
        if not p.stem.startswith("test_") and p.stem != "conftest":
            helpers.setdefault(p.stem, []).append(str(p.relative_to(REPO)))
    assert {k: v for k, v in helpers.items() if len(v) > 1} == {}


def test_two_packages_test_folders_collect_together():
    # the host's folder before the frontend's: its tests imported test_cli, which was the frontend's
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                        "packages/serq/tests", "packages/serq-frontend/tests"],
                       cwd=REPO, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
