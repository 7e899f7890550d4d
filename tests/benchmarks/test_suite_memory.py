"""The suite's memory sampler (benchmarks/suite_memory.py): a process tree's summed PSS, each address
space counted once."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import suite_memory  # noqa: E402

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or suite_memory._KCMP is None,
                                reason="reads /proc and asks kcmp(2): Linux on x86_64 or aarch64")


def test_a_forked_child_is_counted_and_a_process_shares_its_own_memory():
    child = subprocess.Popen([sys.executable, "-c", "import time; x = bytearray(64 << 20); time.sleep(30)"])
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and suite_memory.pss_kb(child.pid) < 60 << 10:
            time.sleep(0.05)
        assert suite_memory.same_memory(os.getpid(), os.getpid())
        assert not suite_memory.same_memory(os.getpid(), child.pid)   # (its own address space, after exec)
        sizes = dict((pid, kb) for kb, pid in suite_memory.sizes_of(os.getpid()))
        assert child.pid in sizes and sizes[child.pid] >= 60 << 10, sizes
    finally:
        child.kill()
        child.wait()


def test_a_child_in_its_parents_address_space_is_left_out(monkeypatch):
    # (a vfork child lives microseconds; the tree and the kernel's answer stand in for one)
    monkeypatch.setattr(suite_memory, "descendants", lambda root: [(root, None), (4242, root)])
    monkeypatch.setattr(suite_memory, "pss_kb", lambda pid: 900 << 10)
    monkeypatch.setattr(suite_memory, "same_memory", lambda a, b: (a, b) == (1, 4242))
    assert suite_memory.sizes_of(1) == [(900 << 10, 1)]
    assert suite_memory.sizes_of(2) == [(900 << 10, 2), (900 << 10, 4242)]
