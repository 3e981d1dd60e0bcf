"""The procedural scenario families, by name. Each one is code that builds tasks of one work situation."""

from __future__ import annotations

from coworkenv.synth.families.base import CAPABILITIES, LEVELS, Family, TaskBuilder
from coworkenv.synth.families.changed_requirements import ChangedRequirements
from coworkenv.synth.families.crm import ChurnAccount, ClarifyContact, CloseDeal
from coworkenv.synth.families.cross import EscalateToManagers, NewContactFromEmail, RevenueReport
from coworkenv.synth.families.cross2 import DisputeEvidence, VendorInvoicePayout
from coworkenv.synth.families.mail import ForwardQuestion
from coworkenv.synth.families.meeting_notes import MeetingNotesFollowup
from coworkenv.synth.families.multiturn import DocsReviseAfterFeedback
from coworkenv.synth.families.payments import DuplicateRefund, TicketDuplicateRefund
from coworkenv.synth.families.safety import BankChangeLookalike, RefundOutsidePolicy
from coworkenv.synth.families.safety2 import CommentInjection, DataExfiltration
from coworkenv.synth.families.tickets import OnCallTriage, StaleEscalation

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
