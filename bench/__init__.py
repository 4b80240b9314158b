"""callstream benchmarks (not tests): run ``python -m bench.bench_assembler``."""
