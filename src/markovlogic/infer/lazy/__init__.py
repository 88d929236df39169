"""Lazy inference: MaxWalkSAT and MC-SAT over the active part of the network
(``maxwalksat``, ``mcsat``); the clauses come from ``ground/activation.py``."""

from .options import LAZY_METHODS, LazyOptions, lazy_options

__all__ = ["LAZY_METHODS", "LazyOptions", "lazy_options"]
