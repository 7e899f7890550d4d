"""What the benchmark scripts' tests share: a script of ``benchmarks/`` loaded as a module."""

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load_bench(name: str):
    """``benchmarks/<name>.py`` as a module, registered under ``name`` (its dataclasses look their
    module up; a script importing a sibling finds it, each script putting its folder on the path)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
