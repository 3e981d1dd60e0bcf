"""The procedural scenario families, by name. Each one is code that builds tasks of one work situation."""

from __future__ import annotations

from coworkenv.synth.generate.families.account_managers import EscalateToManagers, RevenueReport
from coworkenv.synth.generate.families.agenda_update import AgendaUpdateAfterEdit
from coworkenv.synth.generate.families.base import CAPABILITIES, LEVELS, Family, TaskBuilder
from coworkenv.synth.generate.families.calendar_guest_request import OutsideGuestRequest
from coworkenv.synth.generate.families.calendar_invitations import InviteInjection
from coworkenv.synth.generate.families.calendar_reschedule import MeetingRescheduleAfterChange
from coworkenv.synth.generate.families.calendar_rooms import RoomDoubleBooked
from coworkenv.synth.generate.families.calendar_upkeep import HolidayOccurrence, TimeOffDeclines
from coworkenv.synth.generate.families.changed_requirements import ChangedRequirements
from coworkenv.synth.generate.families.chat_impersonation import ChatCfoImpersonation
from coworkenv.synth.generate.families.contacts_sheet import ContactsSheetSync
from coworkenv.synth.generate.families.crm import CloseDeal
from coworkenv.synth.generate.families.crm_contacts import ClarifyContact, NewContactFromEmail
from coworkenv.synth.generate.families.crm_offboarding import ChurnAccount
from coworkenv.synth.generate.families.csv_report import CsvReportToChat
from coworkenv.synth.generate.families.docs_revision import DocsReviseAfterFeedback
from coworkenv.synth.generate.families.escalation_call import EscalationCall
from coworkenv.synth.generate.families.exfiltration_and_injection import CommentInjection, DataExfiltration
from coworkenv.synth.generate.families.file_versions import ShareFinalVersion
from coworkenv.synth.generate.families.files_sharing import SharedFileOutside
from coworkenv.synth.generate.families.fraud_and_policy import BankChangeLookalike
from coworkenv.synth.generate.families.invoice_log import InvoiceEmailsToLog
from coworkenv.synth.generate.families.invoice_reconcile import InvoiceReconcile
from coworkenv.synth.generate.families.mail import ForwardQuestion
from coworkenv.synth.generate.families.meeting_notes import MeetingNotesFollowup
from coworkenv.synth.generate.families.meeting_request import MeetingRequestFromEmail
from coworkenv.synth.generate.families.offboarding import OffboardCustomer

# MeetingNotesFollowup
from coworkenv.synth.generate.families.payments import DuplicateRefund, TicketDuplicateRefund
from coworkenv.synth.generate.families.payout_approval import PayoutsAfterApproval
from coworkenv.synth.generate.families.payout_sheet import PayoutSheetUnknownBank
from coworkenv.synth.generate.families.payouts_and_disputes import DisputeEvidence, VendorInvoicePayout
from coworkenv.synth.generate.families.refund_policy import RefundOutsidePolicy
from coworkenv.synth.generate.families.support_handover import OutOfOfficeHandover
from coworkenv.synth.generate.families.ticket_export import UrgentTicketsToSheet
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
    InviteInjection(),
    RoomDoubleBooked(),
    PayoutSheetUnknownBank(),
    SharedFileOutside(),
    CsvReportToChat(),
    ChatCfoImpersonation(),
    EscalationCall(),
    ShareFinalVersion(),
    MeetingRescheduleAfterChange(),
    PayoutsAfterApproval(),
    TimeOffDeclines(),
    HolidayOccurrence(),
    OutOfOfficeHandover(),
    UrgentTicketsToSheet(),
    InvoiceReconcile(),
    InvoiceEmailsToLog(),
    OffboardCustomer(),
    AgendaUpdateAfterEdit(),
    ContactsSheetSync(),
    MeetingRequestFromEmail(),
    OutsideGuestRequest(),
)
FAMILIES: dict[str, Family] = {f.name: f for f in _ALL}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None


__all__ = ["CAPABILITIES", "FAMILIES", "LEVELS", "Family", "TaskBuilder", "get_family"]
