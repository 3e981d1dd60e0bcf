"""What validating one task works out once and reads many times: the records a blind adversary draws from, the
reads and dumps it plays, the reference's own run and the seed's units. One :class:`ValidationMemos` per task, on
the task's :class:`~coworkenv.synth.contract.runner.Workbench`, made by the code that validates it and handed down
with the workbench; nothing is kept on the task."""

from __future__ import annotations

from dataclasses import dataclass, field

from coworkenv.synth.contract.play import Trial
from coworkenv.synth.contract.task import Step
from coworkenv.synth.contract.validation.adversary_pools import Pools


@dataclass
class ValidationMemos:
    pools: Pools | None = None
    """The task's records as blind adversaries draw them (:func:`~.adversary_args.pools`)."""
    reads: dict[int, list[Step]] = field(default_factory=dict)
    """By call limit: one call of each list/search tool (:mod:`.adversaries`; the steps are shared: read only)."""
    records_text: dict[int, str] = field(default_factory=dict)
    """By character limit: every field of every record, nearest the request first (:mod:`.adversary_texts`)."""
    reference: Trial | None = None
    """The reference's own run through the direct door (:func:`~.adversary_harm.reference_trial`)."""
    old_units: set[str] | None = None
    """The units of text the seed already holds (:mod:`.adversary_harm`)."""
