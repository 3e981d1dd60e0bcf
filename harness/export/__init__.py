"""What leaves the harness for other tools: trajectories as chat records for training, runs as Inspect AI logs,
tasks as Harbor task folders.

- :mod:`~coworkenv.harness.export.chat` — ``coworkenv export``: trajectories → chat JSONL for SFT
  (:class:`~coworkenv.harness.export.chat.ExportParams`, :func:`~coworkenv.harness.export.chat.export_records`);
- :mod:`~coworkenv.harness.export.recoveries` — ``--recoveries``: a wrong call and its real error inserted
  before the right one;
- :mod:`~coworkenv.harness.export.inspect_log` — ``coworkenv export --format inspect``: Inspect AI ``.eval`` logs;
- :mod:`~coworkenv.harness.export.harbor` — ``coworkenv export-tasks --format harbor``: Harbor task folders.
"""
