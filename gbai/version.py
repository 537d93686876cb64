"""The package's version and the output type of a result record (``gbai.studies.record``), readable without studies."""

__version__ = "0.1.0"
RESULT_MIMETYPE = "application/vnd.gbai.result+json"
