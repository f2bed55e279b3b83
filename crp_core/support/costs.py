"""What each stage of a long job costs: wall time, CPU time and resident memory (``--profile``).

:class:`StageClock` times named stages run one after another in this process. CPU time counts this
process and what worker processes report spending on the stage's tasks (:meth:`StageClock.add_cpu`;
a pool's idle time and start-up are not counted). Memory is read from the kernel without changing its counters
(an outside measurement, ``/usr/bin/time`` or ``getrusage``, stays right): ``peak_mb`` is this
process's resident high-water mark at the end of the stage (``ru_maxrss``: the peak so far, so a stage
whose figure is above the previous stage's reached it), ``rss_mb`` its resident set at the end of the
stage (Linux; the peak elsewhere), ``workers_peak_mb`` the largest resident set of any ended worker
process so far.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

_STATUS = "/proc/self/status"


@dataclass(frozen=True)
class StageCost:
    """One stage: seconds of wall and CPU time; resident MB (peak so far, at the end; ended workers' peak)."""

    name: str
    wall_s: float
    cpu_s: float
    peak_mb: float
    rss_mb: float
    workers_peak_mb: float

    def as_dict(self) -> dict[str, object]:
        return {
            "stage": self.name,
            "wall_s": round(self.wall_s, 3),
            "cpu_s": round(self.cpu_s, 3),
            "peak_mb": round(self.peak_mb, 1),
            "rss_mb": round(self.rss_mb, 1),
            "workers_peak_mb": round(self.workers_peak_mb, 1),
        }


def maxrss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """``ru_maxrss`` of ``who`` in MB (the kernel gives kilobytes on Linux, bytes on macOS)."""
    got = float(resource.getrusage(who).ru_maxrss)
    return got / (1024.0 * 1024.0) if sys.platform == "darwin" else got / 1024.0


def _cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _status_mb(key: str) -> float | None:
    """A memory line of /proc/self/status (``VmRSS``, ``VmHWM``) in MB; None where /proc is not there."""
    try:
        with open(_STATUS, encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return float(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass
class StageClock:
    """Times stages (``with clock.stage("text check"): ...``) and keeps one :class:`StageCost` each, in order."""

    stages: list[StageCost] = field(default_factory=list)
    _elsewhere: float = field(default=0.0, init=False)  # CPU seconds other processes reported (add_cpu) so far

    def add_cpu(self, seconds: float) -> None:
        """CPU time a worker process spent on this job during the current stage (it is counted in the stage)."""
        self._elsewhere += float(seconds)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        w0, c0, e0 = time.perf_counter(), _cpu_s(), self._elsewhere
        try:
            yield
        finally:
            wall, cpu = time.perf_counter() - w0, _cpu_s() - c0 + self._elsewhere - e0
            rss = _status_mb("VmRSS")
            # the kernel's counters are updated at different moments: the peak is the largest reading
            peak = max(maxrss_mb(), _status_mb("VmHWM") or 0.0, rss or 0.0)
            self.stages.append(
                StageCost(name, wall, cpu, peak, peak if rss is None else rss, maxrss_mb(resource.RUSAGE_CHILDREN))
            )

    def table(self) -> str:
        """The stages as an aligned text table, with a total row (wall and CPU summed, memory at its largest)."""
        rows = [(s.name, s.wall_s, s.cpu_s, s.peak_mb, s.rss_mb, s.workers_peak_mb) for s in self.stages]
        total = (
            "total",
            sum(s.wall_s for s in self.stages),
            sum(s.cpu_s for s in self.stages),
            max((s.peak_mb for s in self.stages), default=0.0),
            max((s.rss_mb for s in self.stages), default=0.0),
            max((s.workers_peak_mb for s in self.stages), default=0.0),
        )
        head = f"{'stage':<12} {'wall s':>8} {'CPU s':>8} {'peak MB':>8} {'RSS MB':>8} {'workers peak MB':>15}"
        body = [f"{n:<12} {w:>8.2f} {c:>8.2f} {p:>8.0f} {r:>8.0f} {k:>15.0f}" for n, w, c, p, r, k in [*rows, total]]
        return "\n".join([head, *body])
