"""What the other Markov logic systems reach on our workloads.

Transcribed from ``../shared/PEERS.md`` (Alchemy 2, Tuffy with PostgreSQL 15,
pracmln 1.2.4; measured on a machine like ours: 2 cores, 24 GB; wall times are
upper bounds, the systems ran side by side) and, for loading, from issue 2
(pracmln needed 115 s to load tuffy/class). A workload names its key with
``@workload(..., peers="cse-map")``; the harness prints that key's figures
beside ours.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PeerFigure:
    system: str
    what: str
    value: float | str
    unit: str = "s"
    note: str = ""

    def text(self) -> str:
        if isinstance(self.value, str):
            return self.value
        if self.unit == "s":
            return f"{self.value:g} s"
        return f"{self.value:,g} {self.unit}".strip()


A, T, P = "Alchemy 2", "Tuffy", "pracmln 1.2.4"

PEERS: dict[str, list[PeerFigure]] = {
    "load": [
        PeerFigure(P, "load tuffy/class (3.3 MB evidence)", 115.0),
        PeerFigure(A, "parse alchemy/univ.mln", "refused: publication undeclared", ""),
    ],
    "smoke": [
        PeerFigure(A, "everything", "< 0.1 s", ""),
        PeerFigure(T, "ground atoms / clauses", "6 / 6", ""),
        PeerFigure(T, "grounding", 0.4),
        PeerFigure(T, "MAP inference / total", "0.3 s / 3.5 s", ""),
        PeerFigure(T, "MAP cost", 0.0, ""),
        PeerFigure(T, "MC-SAT 100 samples / total", "1.0 s / 4.0 s", ""),
        PeerFigure(P, "MAP", "0.02-0.04 s", ""),
        PeerFigure(P, "MC-SAT", 12.9),
        PeerFigure(P, "exact", 0.2),
    ],
    "cse-ground": [
        PeerFigure(A, "ground atoms / clauses", "4,624 / 161,932", ""),
        PeerFigure(A, "building the ground network", 24.7),
        PeerFigure(T, "ground atoms / clauses (after closure)", "4,408 / 152,763", ""),
        PeerFigure(T, "grounding", 7.4),
        PeerFigure(P, "grounding", "> 600 s (timeout)", ""),
    ],
    "cse-map": [
        PeerFigure(A, "MaxWalkSAT 1M flips", 3.8, note="~266k flips/s"),
        PeerFigure(A, "best cost", 3080.9, ""),
        PeerFigure(T, "MAP inference / total", "16.9 s / 37.5 s", ""),
        PeerFigure(T, "MAP cost", 2818.5, ""),
    ],
    "cse-mcsat": [
        PeerFigure(A, "MC-SAT 1000 samples: sampling / total", "64 s / 88 s", ""),
        PeerFigure(T, "MC-SAT 100 samples / total", "83 s / 102 s", ""),
    ],
    "cse-learn": [
        PeerFigure(A, "discriminative learning (learnwts -d)", 758.0),
        PeerFigure(A, "generative learning (learnwts -g)", 2.1),
        PeerFigure(T, "learning, per iteration", 55.0),
    ],
    "rc1000-ground": [
        PeerFigure(A, "ground atoms / clauses", "1,389 / 201,927", ""),
        PeerFigure(T, "ground atoms / clauses (after closure)", "1,389 / 201,957", ""),
        PeerFigure(T, "grounding", 9.4),
    ],
    "rc1000-map": [
        PeerFigure(A, "MAP total CPU", 49.0),
        PeerFigure(T, "MAP inference / total", "16.6 s / 37.2 s", ""),
        PeerFigure(T, "MAP result", "6,579 hard clauses violated", ""),
    ],
    "rc1000-mcsat": [
        PeerFigure(A, "MC-SAT 1000 samples total CPU", 117.0),
        PeerFigure(T, "MC-SAT 100 samples / total", "101 s / 121 s", ""),
    ],
    "class-ground": [
        PeerFigure(A, "eager grounding", "not finished after 30 min", ""),
        PeerFigure(T, "ground atoms / clauses (546 components)", "9,650 / 73,265", ""),
        PeerFigure(T, "grounding", 4.3),
    ],
    "class-map": [
        PeerFigure(A, "MAP with -lazy, total CPU", 58.0, note="~9k atoms, 55k clauses touched"),
        PeerFigure(T, "MAP inference / total", "4.1 s / 18.0 s", ""),
        PeerFigure(T, "MAP cost", 361.56, ""),
    ],
    "class-mcsat": [
        PeerFigure(A, "MC-SAT with -lazy, total CPU", 339.0),
        PeerFigure(T, "MC-SAT 100 samples / total", "25 s / 43 s", ""),
    ],
}


def peer_figures(key: str | None) -> list[PeerFigure]:
    return PEERS.get(key or "", [])
