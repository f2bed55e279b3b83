"""The install is locked: requirements.lock pins every dependency pyproject.toml declares (all extras),
within its declared range, with torch held to the CPU build (README "Set-up", Makefile `lock`)."""

from __future__ import annotations

import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
LOCK = ROOT / "requirements.lock"


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for raw in LOCK.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;\\]+)", line)
        assert m, f"requirements.lock: not an exact pin: {raw!r}"
        name = canonicalize_name(m.group(1))
        assert name not in pins, f"requirements.lock pins {name} twice"
        pins[name] = Version(m.group(2))
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        reqs += [Requirement(r) for r in extra]
    return reqs


def test_every_declared_dependency_is_pinned_within_its_range() -> None:
    pins = _pins()
    for req in _declared():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} is declared in pyproject.toml but not in requirements.lock: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {name}=={pins[name]}, outside pyproject.toml's {req}: run `make lock`"
        )


def test_torch_is_the_cpu_build_and_no_cuda_wheels() -> None:
    pins = _pins()
    assert pins["torch"].local == "cpu", f"torch must be the CPU build, the lock has {pins['torch']}"
    cuda = sorted(n for n in pins if n.startswith("nvidia-") or n == "triton")
    assert not cuda, f"the lock pulls CUDA wheels: {cuda}"


def test_makefile_installs_through_the_lock() -> None:
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = [ln for ln in make.splitlines() if "$(PIP) install" in ln and "PIP_TOOLS" not in ln]
    assert len(installs) >= 3
    assert all("$(CONSTRAIN)" in ln for ln in installs), installs
    assert re.search(r"^CONSTRAIN\s*:=\s*-c \$\(LOCK\)$", make, re.M)
    assert re.search(r"^LOCK\s*:=\s*requirements\.lock$", make, re.M)
