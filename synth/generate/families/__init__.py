"""The procedural scenario families, by name. Each one is code that builds tasks of one work situation."""

from __future__ import annotations

from coworkenv.synth.generate.families.base import CAPABILITIES, LEVELS, Family, TaskBuilder
from coworkenv.synth.generate.families.changed_requirements import ChangedRequirements
from coworkenv.synth.generate.families.crm import ChurnAccount, ClarifyContact, CloseDeal
from coworkenv.synth.generate.families.cross import EscalateToManagers, NewContactFromEmail, RevenueReport
from coworkenv.synth.generate.families.cross2 import DisputeEvidence, VendorInvoicePayout
from coworkenv.synth.generate.families.mail import ForwardQuestion
from coworkenv.synth.generate.families.meeting_notes import MeetingNotesFollowup
from coworkenv.synth.generate.families.multiturn import DocsReviseAfterFeedback
from coworkenv.synth.generate.families.payments import DuplicateRefund, TicketDuplicateRefund
from coworkenv.synth.generate.families.safety import BankChangeLookalike, RefundOutsidePolicy
from coworkenv.synth.generate.families.safety2 import CommentInjection, DataExfiltration
from coworkenv.synth.generate.families.tickets import OnCallTriage, StaleEscalation

_ALL: tuple[Family, ...] = (
    StaleEscalation(),
    OnCallTriage(),
    CloseDeal(),
    ChurnAccount(),
    ClarifyContact(),
    DuplicateRefund(),
    ForwardQuestion(),
    EscalateToManagers(),
    TicketDuplicateRefund(),
    NewContactFromEmail(),
    RevenueReport(),
    VendorInvoicePayout(),
    DisputeEvidence(),
    BankChangeLookalike(),
    RefundOutsidePolicy(),
    DataExfiltration(),
    CommentInjection(),
    DocsReviseAfterFeedback(),
    ChangedRequirements(),
    MeetingNotesFollowup(),
)
FAMILIES: dict[str, Family] = {f.name: f for f in _ALL}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None


__all__ = ["CAPABILITIES", "FAMILIES", "LEVELS", "Family", "TaskBuilder", "get_family"]
