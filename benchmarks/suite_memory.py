"""The memory a command takes with every process it starts: the summed proportional set size
(PSS: a page shared by n processes counts 1/n to each) of the command's process tree, sampled
every ``--every`` seconds, its peak and who held it then.

The project keeps ``./dev test`` under 4 GB at its peak; this is how that is measured::

    python benchmarks/suite_memory.py -- ./dev test -q
    python benchmarks/suite_memory.py --every 0.5 --log /tmp/mem.tsv -- ./dev test -q tests/compiler

Prints the peak, the processes at the peak (largest first, with their command lines) and, with
``--log``, writes each sample (seconds, total MB, the largest process's MB and command).
Linux only (``/proc/PID/smaps_rollup``).

A child that shares its parent's address space is counted once, with the parent: Python starts a
subprocess with ``vfork``, whose child runs in the parent's memory until it execs, and its
``smaps_rollup`` is the parent's (one sample of the suite read 4,308 MB, a pytest worker's 903 MB twice,
between samples of 3,396 and 3,429 MB). :func:`same_memory` asks the kernel (``kcmp``).
"""

import argparse
import ctypes
import os
import platform
import subprocess
import sys
import time


def children_of() -> dict[int, list[int]]:
    """Each process's children, from /proc/*/stat."""
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(name))
    return tree


def descendants(root: int) -> list[tuple[int, int | None]]:
    """``root`` and every process under it, each with its parent (None for ``root``)."""
    tree, found, todo = children_of(), [], [(root, None)]
    while todo:
        pid, parent = todo.pop()
        found.append((pid, parent))
        todo.extend((child, pid) for child in tree.get(pid, ()))
    return found


#: kcmp(2)'s number on the machines this runs on, and its KCMP_VM
_KCMP = {"x86_64": 312, "aarch64": 272}.get(platform.machine())
_KCMP_VM = 1
_libc = None


def same_memory(a: int, b: int) -> bool:
    """Whether processes ``a`` and ``b`` share one address space (a ``vfork`` child and its parent
    until the child execs); False where the kernel cannot say.

    >>> same_memory(os.getpid(), os.getpid()) or _KCMP is None
    True
    """
    global _libc
    if _KCMP is None:
        return False
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.syscall(_KCMP, a, b, _KCMP_VM, 0, 0) == 0


def sizes_of(root: int) -> list[tuple[int, int]]:
    """``(PSS in kB, pid)`` of ``root`` and its descendants, a child in its parent's address space left out."""
    return [(pss_kb(pid), pid) for pid, parent in descendants(root)
            if parent is None or not same_memory(parent, pid)]


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def command_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:160]
    except OSError:
        return "?"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--log", help="write every sample to this file (tab-separated)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    started = time.monotonic()
    proc = subprocess.Popen(command)
    peak, at_peak, peak_time = 0, [], 0.0
    log = open(args.log, "w") if args.log else None
    while proc.poll() is None:
        sizes = sizes_of(proc.pid)
        total = sum(kb for kb, _ in sizes)
        now = time.monotonic() - started
        if total > peak:
            peak, peak_time = total, now
            at_peak = sorted(((kb, pid, command_of(pid)) for kb, pid in sizes if kb), reverse=True)
        if log:
            top = max(sizes, default=(0, 0))
            log.write(f"{now:.1f}\t{total / 1024:.0f}\t{top[0] / 1024:.0f}\t{command_of(top[1])}\n")
            log.flush()
        time.sleep(args.every)
    elapsed = time.monotonic() - started
    print(f"\nsuite_memory: peak {peak / 1024:.0f} MB (summed PSS) at {peak_time:.0f} s of {elapsed:.0f} s;"
          f" exit status {proc.returncode}", file=sys.stderr)
    for kb, pid, cmd in at_peak[:12]:
        print(f"  {kb / 1024:7.0f} MB  {pid:7d}  {cmd}", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
