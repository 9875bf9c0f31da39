"""asv benchmarks for sparseset (run them from ``asv_bench/``, see asv.conf.json)."""
