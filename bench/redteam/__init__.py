"""The red team of issue 42, as code: generic attacks on a task built from its reference solution, its seed records
and its services (never written per family), grouped by the failure classes of the issue. ``bench_redteam.py``
plays them and reports, per class, the share of the tasks an attack applies to that still pass.

- :mod:`.base`: what an attack is, what one run of the reference tells the attacks, text and argument helpers;
- :mod:`.writes`: classes 1–5 (what the agent creates and writes, and as whom);
- :mod:`.words`: classes 6, 7, 8 and 10 (what it says and promises, and when it acts);
- :mod:`.figures`: classes 9 and 11 (the figure it states as its answer).
"""
