"""The compiled engine: :mod:`gbai.paper`'s rewards and algorithms with numba, tested run for run against it."""
