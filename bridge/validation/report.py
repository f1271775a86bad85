"""The results of a comparison: :class:`Result` rows, :class:`Finding`\\ s, and the :class:`Report`.

One type for every comparison: ``cross_validate`` between engines, its identities, and the
libraries' own loaders (``native=True``). An error is norm-wise per sample, ``rel = ||a - b|| /
max(1, ||b||)`` with b the reference; a row keeps the worst over the samples.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

__all__ = ["Finding", "Report", "Result"]


@dataclass(frozen=True)
class Result:
    """One comparison: a quantity in a representation between two engines, or an identity."""

    quantity: str
    representation: str
    engines: str  # "pinocchio vs idyntree", or "pinocchio: FD(ID(a)) = a"
    max_abs: float
    max_rel: float
    worst_sample: int
    tolerance: float
    passed: bool
    frame: str | None = None


@dataclass(frozen=True)
class Finding:
    """One recognised cause of a difference (or a fact worth knowing) and what it concerns.

    ``error_with`` / ``error_without``: the largest relative error of the compared quantities as
    given and with this cause removed (None for causes that do not change the numbers).
    """

    cause: str
    subjects: tuple[str, ...]
    message: str
    error_with: float | None = None
    error_without: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        effect = ""
        if self.error_with is not None:
            without = "-" if self.error_without is None else f"{self.error_without:.1e}"
            effect = f" (error {self.error_with:.1e} with it, {without} without)"
        return f"finding {self.cause}: {', '.join(self.subjects)}: {self.message}{effect}"


@dataclass
class Report:
    """Results of :func:`bridge.cross_validate` (engines or, with ``native=True``, loaders)."""

    model: str
    engines: list[str]
    representations: list[str]
    samples: int
    seed: int
    rtol: float
    results: list[Result] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    #: the recognised causes of differences (singular mass matrices, the loaders' differences)
    findings: list[Finding] = field(default_factory=list)
    #: whether a report without results is ok (False for the native loaders: a refused file
    #: compares nothing)
    empty_ok: bool = True

    @property
    def ok(self) -> bool:
        """Every comparison passed (and, unless ``empty_ok``, there was one)."""
        return (self.empty_ok or bool(self.results)) and all(r.passed for r in self.results)

    @property
    def failures(self) -> list[Result]:
        return [r for r in self.results if not r.passed]

    def worst(self, quantity: str | None = None, engines: str | None = None) -> float:
        """The largest relative error of the rows of ``quantity`` and ``engines`` (all by default)."""
        return max(
            (
                r.max_rel
                for r in self.results
                if quantity in (None, r.quantity) and engines in (None, r.engines)
            ),
            default=0.0,
        )

    def summary_rows(self) -> list[Result]:
        """One row per (quantity, representation, engines): the worst over frames."""
        worst: dict[tuple[str, str, str], Result] = {}
        for r in self.results:
            key = (r.quantity, r.representation, r.engines)
            prev = worst.get(key)
            if prev is None or (r.max_rel / r.tolerance) > (prev.max_rel / prev.tolerance):
                worst[key] = r
        return list(worst.values())

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "engines": self.engines,
            "representations": self.representations,
            "samples": self.samples,
            "seed": self.seed,
            "rtol": self.rtol,
            "ok": self.ok,
            "seconds": self.seconds,
            "notes": self.notes,
            "findings": [f.to_dict() for f in self.findings],
            "results": [asdict(r) for r in self.results],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        lines = [
            f"cross-validation of {self.model!r}: engines {', '.join(self.engines)}; "
            f"representations {', '.join(self.representations)}; {self.samples} samples, seed {self.seed}, "
            f"rtol {self.rtol:g}",
            f"{'quantity':<28} {'repr':<9} {'engines':<36} {'max abs':>10} {'max rel':>10}  result",
        ]
        for r in self.summary_rows():
            what = r.quantity + (f"[{r.frame}]" if r.frame and not r.passed else "")
            lines.append(
                f"{what:<28} {r.representation:<9} {r.engines:<36} {r.max_abs:>10.2e} {r.max_rel:>10.2e}  "
                + ("ok" if r.passed else f"FAIL (sample {r.worst_sample})")
            )
        lines.extend(f"note: {note}" for note in self.notes)
        lines.extend(str(f) for f in self.findings)
        n_fail = len(self.failures)
        lines.append(
            f"{'all agree' if self.ok else f'{n_fail} of {len(self.results)} comparisons disagree'} "
            f"({self.seconds:.2f} s)"
        )
        return "\n".join(lines)
