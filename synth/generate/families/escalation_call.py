"""A cross-service family on tickets, CRM and calendar: after a customer's ticket is escalated, set up a
30-minute call with the customer's contacts (from the CRM) and their account manager at the one time in the
afternoon when the user and the manager are both free, and note the call on the ticket."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, MULTISTEP, WINDOW, Family, Json, TaskBuilder, possessive
from coworkenv.synth.generate.families.kit.calendar_common import Calendar, background, calendar, plus, time_rx, when
from coworkenv.synth.generate.families.kit.names import USER, Company, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import only
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES


@dataclass(frozen=True)
class _Call:
    company: Company
    manager: Staff
    ticket: Json
    subject: str
    slot: str
    day: str
    invitees: list[str]


@register_family
class EscalationCall(Family):
    name = "escalation-call-with-contacts"
    scenario = "scheduling a call with a customer's contacts after an escalation"
    capabilities = (CROSS, WINDOW, MULTISTEP)
    service_options = (("tickets", "crm", "calendar"),)
    distractors = (
        "other customers' escalated tickets and contacts; the customer's older solved ticket; afternoon times when "
        "only one of the two is free; (hard) a declined invitation and a free-time block at the free slot"
    )

    def build(self, b: TaskBuilder) -> str:
        c = self._seed(b)
        self._reference(b, c)
        self._checks(b, c)
        _forbidden(b, c)
        b.may_name += [c.company.name, c.day]
        ask = Ask(
            steps=[
                "set up a 30-minute call on {day} afternoon (1-5 pm UTC) with {company's} contacts and their account "
                "manager, at a time when the manager and I are both free",
                "add an internal note on the escalated ticket saying when the call is",
            ],
            context="{company's} ticket got escalated and we want to talk to them directly.",
            topic="a call with {company}",
        )
        backdrop(b)
        return compose(b, ask, company=c.company.name, day=c.day)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Call:
        cast = Cast(b)
        x = cast.company(b.pick("enterprise", "business"), contacts=1 + b.targets)
        others = [cast.company(contacts=2) for _ in range(1 + b.n_distractors() // 2)]
        cast.crm()
        cast.tickets()
        issues = b.rng.sample(ISSUES, 3 + len(others))
        t = ticket(b, cast, x, b.ago(days=b.rng.randint(2, 6)), "open", "urgent", issues.pop())
        t["escalated"] = True
        decoys = [ticket(b, cast, x, b.ago(days=30), "solved", "normal", issues.pop())["id"]]
        for o in others:
            d = ticket(b, cast, o, b.ago(days=b.rng.randint(1, 5)), "open", "high", issues.pop())
            d["escalated"] = True
            decoys.append(d["id"])
        filler_tickets(b, cast, b.n_filler())
        b.distract(*decoys)
        am = cast.owner[x.key]
        cal = calendar(b, extra=1, staff=list(cast.staff))
        day_n = b.rng.randint(1, 2)
        slot = when(b, day_n, 13, 30 * b.rng.randrange(0, 8))
        EscalationCall._busy(b, cal, am, day_n, slot)
        cal.filler(b.n_filler())
        background(cal, 6 + 2 * b.n_filler(), (am,))
        invitees = [x.email(p) for p in x.contacts] + [am.email]
        return _Call(x, am, t, t["subject"], slot, b.spoken_day(slot), invitees)

    @staticmethod
    def _busy(b: TaskBuilder, cal: Calendar, am: Staff, day_n: int, slot: str) -> None:
        """Fill the afternoon of 1-5 pm for the user or the manager, all but the 30 minutes at ``slot``; (hard) a
        declined invitation and a free-time block at the slot."""
        start, end = when(b, day_n, 13), when(b, day_n, 17)
        t = start
        while t < end:
            if t == slot:
                t = plus(t, 30)
                continue
            length = 30 if plus(t, 30) == slot or plus(t, 30) >= end else b.pick(30, 60)
            if t < slot < plus(t, length):
                length = 30
            who = b.pick(USER, am)
            partner = am if who is USER else b.rng.choice([s for s in cal.staff if s not in (USER, am)])
            cal.event(who, cal.title(), t, length, [(partner.email, "accepted")])
            t = plus(t, length)
        if b.hard:
            other = b.rng.choice([s for s in cal.staff if s not in (USER, am)])
            cal.event(other, cal.title(), slot, 30, [(USER.email, "declined")])
            focus = cal.event(am, "Focus time", slot, 30)
            focus["transparency"] = "transparent"

    @staticmethod
    def _reference(b: TaskBuilder, c: _Call) -> None:
        x, tid = c.company, c.ticket["id"]
        day_start, day_end = c.slot[:11] + "13:00:00Z", c.slot[:11] + "17:00:00Z"
        summary = f"{x.name} escalation call: {c.subject}"
        note = f"Call with {x.name} and {c.manager.name} booked on {c.day} at {c.slot[11:16]} UTC (30 minutes)."
        b.call("tickets", "get_ticket", ticket_id=tid)
        b.call("crm", "search_contacts", "contacts", account_id=f"acc_{x.key}")
        b.call("crm", "get_account", account_id=f"acc_{x.key}")
        b.call("calendar", "find_free_slot", duration_minutes=30, attendees=[c.manager.email], time_min=day_start,
               time_max=day_end)  # fmt: skip
        b.call("calendar", "create_event", summary=summary, start=c.slot, end=plus(c.slot, 30), attendees=c.invitees)
        b.call("tickets", "add_comment", ticket_id=tid, body=note, public=False)
        b.say(f"Booked: {summary}, {c.day} {c.slot[11:16]}-{plus(c.slot, 30)[11:16]} UTC, and noted it on the ticket.")
        with b.alternative():
            b.call(
                "tickets",
                "add_comment",
                ticket_id=tid,
                body=f"Customer call set for {c.slot[11:16]} UTC.",
                public=False,
            )
            b.call("calendar", "query_free_busy", people=[USER.email, c.manager.email], time_min=day_start,
                   time_max=day_end)  # fmt: skip
            b.call("calendar", "create_event", summary=f"Call with {x.name}", start=c.slot, end=plus(c.slot, 30),
                   attendees=list(reversed(c.invitees)), description=f"About: {c.subject}")  # fmt: skip
            b.say(f"The call is on {c.day} at {c.slot[11:16]} UTC.")

    @staticmethod
    def _checks(b: TaskBuilder, c: _Call) -> None:
        """The call at the free slot with everyone (0.44), the note (0.26: without it the task fails), the other
        tickets as they were (0.3)."""
        b.check(
            "call_booked",
            0.44,
            f"A 30-minute call at the free time on {c.day} invites {possessive(c.company.name)} contacts and "
            f"{c.manager.name}, and no one else.",
            {"kind": "record_exists", "service": "calendar", "table": "events",
             "where": {"start": c.slot, "end": plus(c.slot, 30), "status": "confirmed", "organizer": USER.email,
                       "attendees.email": only(c.invitees)}},
        )  # fmt: skip
        b.check(
            "ticket_noted",
            0.26,
            "An internal note on the escalated ticket gives the call's time.",
            {"kind": "record_exists", "service": "tickets", "table": "comments",
             "where": {"ticket_id": c.ticket["id"], "public": False, "created_at": {"gte": b.now_iso},
                       "body": {"regex": time_rx(c.slot), "case_insensitive": True}}},
        )  # fmt: skip
        b.check(
            "other_tickets_untouched",
            0.3,
            "Other customers' escalated tickets and the customer's older ticket are as they were.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": list(b.distractors)},
            ("call_booked",),
        )


def _forbidden(b: TaskBuilder, c: _Call) -> None:
    b.forbid_call(
        "closed_escalation",
        "Solving or closing the escalated ticket, which nobody has fixed.",
        "tickets",
        "update_ticket",
        {"status": {"in": ["solved", "closed"]}},
        {"ticket_id": c.ticket["id"], "status": "solved"},
    )
