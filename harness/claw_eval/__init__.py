"""Claw-Eval on our stack: import its tasks (:mod:`.importer`), grade runs with its own graders (:mod:`.grading`),
and prove the import agrees with its mock services (:mod:`.parity`)."""
