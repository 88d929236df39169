"""markovlogic benchmarks: ``python -m bench [workload ...]`` (see harness.py)."""
