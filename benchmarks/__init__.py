"""Benchmarks that print JSON; not tests."""
