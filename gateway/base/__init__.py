"""What every layer stands on: the records and their shapes (``models``, ``ids``, ``forms``, cursors and
partitions), errors, settings, structured logs and metrics, and small utilities (back-off, tasks, rate
limits, signing, the ``Check`` of ``doctor``).

Imports: the standard library and third-party packages only, never another layer of ``gateway``.
"""
