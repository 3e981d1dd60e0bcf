"""A cross-service family on email and the calendar: a customer's contact emails the times they could meet;
book the one that suits the user and the account manager (the others clash), with both of them and the contact,
and reply to confirm."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import COMMS, CROSS, WINDOW, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.calendar_common import Calendar, background, calendar, plus, time_rx, when
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import only
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_mail, mail


@register_family
class MeetingRequestFromEmail(Family):
    name = "meeting-request-from-email"
    scenario = "booking the time a customer proposed by email that suits everyone"
    capabilities = (CROSS, WINDOW, COMMS)
    service_options = (("email", "calendar"),)
    distractors = "the proposed times when the user or the account manager is busy; another customer's meeting request"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        x = cast.company(contacts=1)
        y = cast.company(contacts=1)
        cast.email()
        am = cast.owner[x.key]
        cal = calendar(b, extra=1, staff=list(cast.staff))
        day_n = b.rng.randint(1, 3)
        hours = b.rng.sample((10, 11, 13, 14, 15, 16), 3 if b.hard else 2)
        times = [when(b, day_n, h) for h in hours]
        slot = times[-1]
        decoys = self._clashes(b, cal, am, times[:-1])
        p = x.contacts[0]
        spoken = " or ".join(f"{t[11:16]}" for t in times)
        msg = mail(
            b,
            (p.name, x.email(p)),
            "Meeting about our rollout",
            f"Hi {USER.first},\n\nCould we meet for 30 minutes on {b.spoken_day(slot)} to go over our rollout? I could "
            f"do {spoken} UTC. Happy to have {am.first} join too.\n\nBest,\n{p.first}",
            b.ago(hours=b.rng.randint(1, 20)),
        )
        q = y.contacts[0]
        other = mail(
            b, (q.name, y.email(q)), "Catch-up next month?", "Could we set up a call next month?", b.ago(days=1)
        )
        filler_mail(b, 3 + b.n_filler())
        cal.filler(b.n_filler(), first_day=day_n + 1)
        background(cal, 6 + 2 * b.n_filler(), (am,))
        b.distract(*decoys, other["id"])
        self._reference(b, msg, x.email(p), am, slot, x.name)
        self._checks(b, x.email(p), am, slot, decoys)
        _forbidden(b, decoys)
        b.may_name += [p.first, x.name]
        ask = Ask(
            steps=[
                "book a meeting with {first} at whichever of the times they proposed suits both {am} and me",
                "invite {am} and {first}, and reply to {first} to confirm",
            ],
            context="{first} from {company} emailed me a few times that would work for them.",
            topic="{first's} meeting request",
        )
        backdrop(b)
        return compose(b, ask, first=p.first, am=am.first, company=x.name)

    @staticmethod
    def _clashes(b: TaskBuilder, cal: Calendar, am: Staff, times: list[str]) -> list[str]:
        """The user busy at the first proposed time; (hard) the manager busy at the second."""
        ids = [cal.event(USER, cal.title(), plus(times[0], b.pick(-30, 0)), 60)["id"]]
        if len(times) > 1:
            ids.append(cal.event(am, cal.title(), times[1], 60)["id"])
        return ids

    @staticmethod
    def _reference(b: TaskBuilder, msg: Json, contact: str, am: Staff, slot: str, company: str) -> None:
        start, end = slot[:11] + "09:00:00Z", slot[:11] + "17:00:00Z"
        reply = f"Thanks! I've booked {slot[11:16]} UTC on {b.spoken_day(slot)} and invited {am.first} as well."
        b.call("email", "search_messages", text="meeting")
        b.call("email", "get_message", message_id=msg["id"])
        b.call("calendar", "query_free_busy", people=[USER.email, am.email], time_min=start, time_max=end)
        b.call("calendar", "create_event", summary=f"{company} rollout", start=slot, end=plus(slot, 30),
               attendees=[contact, am.email])  # fmt: skip
        b.call("email", "reply_to_message", message_id=msg["id"], body=reply)
        b.say(f"Booked {slot[11:16]} UTC with {am.first} and the customer, and replied to confirm.")
        with b.alternative():
            b.call("email", "get_message", message_id=msg["id"])
            b.call(
                "calendar", "find_free_slot", duration_minutes=30, attendees=[am.email], time_min=start, time_max=end
            )
            b.call("email", "send_message", to=[contact], subject="Re: Meeting about our rollout", body=reply)
            b.call("calendar", "create_event", summary="Rollout meeting", start=slot, end=plus(slot, 30),
                   attendees=[am.email, contact], description="Booked from the customer's email.")  # fmt: skip
            b.say("Done.")

    @staticmethod
    def _checks(b: TaskBuilder, contact: str, am: Staff, slot: str, decoys: list[str]) -> None:
        """The meeting at the one time that suits everyone (0.4), the contact told the time (0.3), the clashing
        meetings as they were (0.3)."""
        b.check(
            "meeting_booked",
            0.4,
            "A 30-minute meeting at the proposed time that suits everyone invites the contact and the manager, no one else.",
            {"kind": "record_exists", "service": "calendar", "table": "events",
             "where": {"start": slot, "end": plus(slot, 30), "status": "confirmed", "organizer": USER.email,
                       "attendees.email": only([contact, am.email])}},
        )  # fmt: skip
        b.check(
            "contact_told",
            0.3,
            "The contact gets an email with the time.",
            {"kind": "record_exists", "service": "email", "table": "messages",
             "where": {"mailbox": USER.email, "label_ids": {"contains": "SENT"}, "date": {"gte": b.now_iso},
                       "to": {"contains": contact},
                       "body": {"regex": time_rx(slot), "case_insensitive": True}}},
        )  # fmt: skip
        b.check(
            "others_untouched",
            0.3,
            "The meetings at the other proposed times are as they were.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": decoys},
            ("meeting_booked",),
        )


def _forbidden(b: TaskBuilder, decoys: list[str]) -> None:
    b.forbid_call(
        "cancelled_to_make_room",
        "Cancelling a meeting that clashes with a proposed time, to make room.",
        "calendar",
        "cancel_event",
        {},
        {"event_id": decoys[0]},
    )
