"""An installed vLLM whose import fails otherwise than by an ImportError (torch's OSError for a library it
cannot load, vLLM's RuntimeError for a platform it does not know): ``serq vllm real`` says so in one line,
status 1, in its own interpreter and through --python alike; in its own it was a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SERQ = os.path.join(os.path.dirname(sys.executable), "serq")


def fake_vllm(tmp_path, failure: str):
    site = tmp_path / "site"
    (site / "vllm-9.9.dist-info").mkdir(parents=True)
    (site / "vllm-9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 9.9\n")
    (site / "vllm").mkdir()
    (site / "vllm" / "__init__.py").write_text(f"raise {failure}\n")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    return site


@pytest.mark.parametrize(("failure", "told"), [
    ("RuntimeError('Failed to infer device type')", "RuntimeError: Failed to infer device type"),
    ("OSError('libcudart.so.12: cannot open shared object file')",
     "OSError: libcudart.so.12: cannot open shared object file"),
    ("ImportError('cannot import name X')", "cannot import name X"),
])
@pytest.mark.parametrize("through", [(), ("--python", sys.executable)])
def test_an_import_that_fails_is_one_message(tmp_path, failure, told, through):
    env = dict(os.environ, PYTHONPATH=str(fake_vllm(tmp_path, failure)))
    r = subprocess.run([SERQ, "vllm", "real", *through, "vllm/preempt"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"error: vLLM 9.9 is installed but its scheduler does not import ({told}); see "
                        "docs/vllm-oracle.md for the packages it needs\n")
