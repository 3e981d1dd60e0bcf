"""What families are built with; no module here is a family (the families are the modules one folder up).

- :mod:`~coworkenv.synth.generate.families.kit.base` — :class:`Family`, the :class:`TaskBuilder` a family fills in,
  the capability and difficulty names;
- :mod:`~coworkenv.synth.generate.families.kit.writing` — small helpers for text, patterns and weights (``tidy``,
  ``money``, ``rx``, ``warns``, ``shares``; :mod:`~.base` hands them on);
- :mod:`~coworkenv.synth.generate.families.kit.registry` — :func:`register_family` and the registry by name;
- :mod:`~coworkenv.synth.generate.families.kit.names`, :mod:`~.texts`, :mod:`~.vocabulary` — who is in a task and
  the text pools it draws from;
- :mod:`~coworkenv.synth.generate.families.kit.seeds` — the cast of a task in each service, single records, filler;
- :mod:`~coworkenv.synth.generate.families.kit.backdrop` — the rest of a workplace around the records that matter;
- :mod:`~coworkenv.synth.generate.families.kit.phrasing` — how the user asks (one request, several styles);
- :mod:`~coworkenv.synth.generate.families.kit.reach` — checks on whom writes reach and what they say;
- what the families of one kind share: :mod:`~coworkenv.synth.generate.families.kit.calendar_common` (calendar),
  :mod:`~.files_common` (shared drive), :mod:`~.multiturn` (the user changes the work mid-task),
  :mod:`~.tickets_common` (helpdesk), :mod:`~.crm_common` (deals), :mod:`~.duplicate_charges` (refunds).
"""
