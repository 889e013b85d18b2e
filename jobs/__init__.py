"""Staged jobs: each reads, runs a short list of library stages, and writes Parquet."""
