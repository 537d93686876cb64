"""Tools that drive the library from outside: the command line, benchmarks and long measurements.

Nothing in the library imports this package.
"""
