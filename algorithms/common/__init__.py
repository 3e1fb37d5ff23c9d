"""Shared primitives of every paper's learners: hypothesis classes, samplers (subsets, partitions,
the exponential mechanism), fit caches and parameter checks."""

