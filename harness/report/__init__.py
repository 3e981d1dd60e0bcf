"""The HTML report of runs (``coworkenv report RUN_DIR … --out report.html``): one static, self-contained file.

- :mod:`~coworkenv.harness.report.build` — :func:`~coworkenv.harness.report.build.build_report`, the entry point;
- :mod:`~coworkenv.harness.report.data` — runs loaded and packed (a column index, gzip chunks of details);
- :mod:`~coworkenv.harness.report.html` — the page and its summary tables;
- :mod:`~coworkenv.harness.report.js` — the page's script (filters, table, trajectory viewer);
- :mod:`~coworkenv.harness.report.svg` — the plots, drawn as inline SVG.
"""
