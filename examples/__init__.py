"""Example jobs; run them from the repository root (see each example's README)."""
