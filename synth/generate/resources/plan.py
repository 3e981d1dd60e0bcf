"""The capability plan of a run on a user's files (``coworkenv synth --from DIR`` without ``--plan``): every
registered family that grounds its tasks on loaded files (``ResourceFamily``) and finds a subject in these, drawn
equally, on every capability they exercise."""

from __future__ import annotations

from coworkenv.synth.generate.plan import CapabilityPlan, CapabilitySpec, ScenarioSpec
from coworkenv.synth.generate.resources.loader import ResourceError
from coworkenv.synth.generate.resources.model import ResourceSet


def grounded_families(rs: ResourceSet) -> list[str]:
    """The names of the registered resource families that find a subject in ``rs``, sorted."""
    from coworkenv.synth.generate.families import FAMILIES
    from coworkenv.synth.generate.families.kit.resources_common import ResourceFamily

    return sorted(name for name, f in FAMILIES.items() if isinstance(f, ResourceFamily) and f.fits(rs))


def grounded_plan(rs: ResourceSet, count: int = 50) -> CapabilityPlan:
    """A plan of :func:`grounded_families`; a :class:`ResourceError` when none fits."""
    from coworkenv.synth.generate.families import FAMILIES

    names = grounded_families(rs)
    if not names:
        raise ResourceError(
            f"--from {rs.folder}: no family finds a subject in its files ({rs.summary()}); tasks are built around a "
            "CSV with an amount column, a document stating facts ('Venue: ...'), or a mail with an invoice"
        )
    capabilities: list[str] = []
    for name in names:
        capabilities += [c for c in FAMILIES[name].capabilities if c not in capabilities]
    return CapabilityPlan(
        name="from-files",
        description=f"Tasks grounded on the files of {rs.folder}",
        count=count,
        capabilities=[CapabilitySpec(name=c) for c in capabilities],
        scenarios=[ScenarioSpec(family=n) for n in names],
    )
