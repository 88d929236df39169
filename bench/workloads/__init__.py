"""Benchmark workloads: every module here registers its workloads with
``bench.harness.workload`` when imported."""
