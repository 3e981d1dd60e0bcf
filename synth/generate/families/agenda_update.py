"""A multi-turn family on the shared drive and the calendar: the agent copies a meeting's agenda from its file on
the drive into the meeting's description; the user then adds an item to the agenda file and asks for the
description to follow and the item's owner to be invited."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, CROSS, MULTISTEP, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.calendar_common import background, calendar, when
from coworkenv.synth.generate.families.kit.files_common import drive
from coworkenv.synth.generate.families.kit.multiturn import FINISHED, PERSONA, PROJECTS
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import only
from coworkenv.synth.generate.families.kit.registry import register_family

ITEMS = (
    "Goals and success metrics", "Timeline and milestones", "Risks and open questions", "Roles and owners",
    "Budget check", "Customer feedback so far", "Dependencies on other teams", "Launch communication plan",
    "Testing strategy", "Data migration approach", "Support readiness", "Next steps",
)  # fmt: skip


@dataclass(frozen=True)
class _Agenda:
    project: str
    title: str
    event: Json
    file: Json
    items: list[str]
    added: str
    owner: Staff


def _agenda(project: str, items: list[str]) -> str:
    return f"# {project} kickoff agenda\n\n" + "".join(f"- {i}\n" for i in items)


@register_family
class AgendaUpdateAfterEdit(Family):
    name = "agenda-update-after-edit"
    scenario = "keeping a meeting's agenda in step with its file after the user edits it"
    capabilities = (CROSS, MULTISTEP, CLARIFY)
    service_options = (("calendar", "files"),)
    distractors = "last quarter's agenda file of the same project; another project's kickoff meeting and agenda"

    def build(self, b: TaskBuilder) -> str:
        a = self._seed(b)
        self._user_turn(b, a)
        self._reference(b, a)
        self._checks(b, a)
        _forbidden(b, a)
        b.may_name += [a.project, a.title]
        ask = Ask(
            steps=[
                "copy the agenda from the {project} kickoff agenda file on the drive into the description of the "
                "{title}"
            ],
            context="The {title} is coming up and its invite has no agenda yet.",
            topic="the {title} agenda",
        )
        backdrop(b)
        return compose(b, ask, project=a.project, title=a.title)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Agenda:
        cal = calendar(b, extra=b.rng.randint(1, 3))
        d = drive(b, list(cal.staff))
        project, other = b.rng.sample(PROJECTS, 2)
        picks = b.rng.sample(ITEMS, 4 + b.targets + 1)
        items, added, spare = picks[: 3 + b.targets], picks[3 + b.targets], picks[-1]
        others = [s for s in cal.staff if s is not USER]
        invited = b.rng.sample(others, 3)
        owner = b.rng.choice([s for s in others if s not in invited])
        title = f"{project} kickoff"
        event = cal.event(USER, title, when(b, b.rng.randint(2, 4), 14), 60, [(s.email, "accepted") for s in invited])
        f = d.file(f"{project} kickoff agenda.md", _agenda(project, items), USER, "Team", 2)
        old = d.file(
            f"{project} kickoff agenda (last quarter).md", _agenda(project, [spare, *items[:2]]), USER, "Archive", 95
        )
        o_event = cal.event(others[0], f"{other} kickoff", when(b, 2, 10), 60, [(USER.email, "accepted")])
        o_file = d.file(f"{other} kickoff agenda.md", _agenda(other, b.rng.sample(ITEMS, 4)), others[0], "Team", 5)
        cal.filler(b.n_filler())
        background(cal, 6 + 2 * b.n_filler())
        d.filler(4 + b.n_filler())
        b.distract(old["id"], o_event["id"], o_file["id"])
        if b.hard:
            older = _agenda(project, b.rng.sample(ITEMS, 3))
            b.distract(d.file(f"{project} kickoff agenda (2025).md", older, USER, "Archive", 300)["id"])
            b.distract(cal.event(others[1], f"{project} kickoff prep", when(b, 1, 15), 30, [])["id"])
        return _Agenda(project, title, event, f, items, added, owner)

    @staticmethod
    def _user_turn(b: TaskBuilder, a: _Agenda) -> None:
        line = f"- {a.added} ({a.owner.first})\n"
        edit = {"service": "files", "tool": "append_to_file", "arguments": {"file_id": a.file["id"], "text": line}}
        message = (
            f"Thanks. I just added one more item to the agenda file. Please update the meeting's description to "
            f"match, and invite {a.owner.first} since that item is theirs."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": [edit]}]}

    @staticmethod
    def _reference(b: TaskBuilder, a: _Agenda) -> None:
        eid, fid = a.event["id"], a.file["id"]
        first = _agenda(a.project, a.items)
        after = first + f"- {a.added} ({a.owner.first})\n"
        b.call("files", "search_files", query=f"{a.project} kickoff agenda")
        b.call("files", "read_file", file_id=fid)
        b.call("calendar", "search_events", query=a.title)
        b.call("calendar", "update_event", event_id=eid, description=first)
        b.say(f"The {a.title} invite now has the agenda ({len(a.items)} items).")
        b.call("files", "read_file", file_id=fid)
        b.call("calendar", "list_users", query=a.owner.first)
        b.call("calendar", "update_event", event_id=eid, description=after, add_attendees=[a.owner.email])
        b.say(f"Updated the description with '{a.added}' and invited {a.owner.name}.")
        with b.alternative():
            b.call("files", "list_files", folder_id="fld_team")
            b.call("files", "read_file", file_id=fid)
            b.call("calendar", "update_event", event_id=eid, description="Agenda:\n" + first.split("\n\n", 1)[1])
            b.say("Done.")
            b.call("calendar", "update_event", event_id=eid, add_attendees=[a.owner.email])
            b.call("files", "read_file", file_id=fid)
            b.call("calendar", "update_event", event_id=eid, description="Agenda:\n" + after.split("\n\n", 1)[1])
            b.say(f"Added '{a.added}' and {a.owner.first}.")

    @staticmethod
    def _checks(b: TaskBuilder, a: _Agenda) -> None:
        """The description holds every item, the new one included (0.4), the owner invited and no one else (0.3:
        inviting the whole workspace fails the task), the other files and meetings as they were (0.3)."""
        every = "^" + "".join(f"(?=[\\s\\S]*{rx(i)})" for i in [*a.items, a.added])
        b.check(
            "agenda_in_description",
            0.4,
            f"The {a.title} description lists every agenda item, the user's new one included.",
            {"kind": "record_fields", "service": "calendar", "table": "events", "id": a.event["id"],
             "fields": {"description": {"regex": every}, "start": a.event["start"], "status": "confirmed"}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "owner_invited",
            0.3,
            f"{a.owner.name}, who owns the new item, is invited (and no one else is).",
            {"kind": "record_fields", "service": "calendar", "table": "events", "id": a.event["id"],
             "fields": {"attendees.email": only([a.owner.email], also=[x["email"] for x in a.event["attendees"]])}},
            ("agenda_in_description",),
            after_turn=1,
        )  # fmt: skip
        cal_ids = [i for i in b.distractors if i.startswith("evt_")]
        b.check(
            "others_untouched",
            0.3,
            "The other project's kickoff is as it was.",
            {"kind": "records_unchanged", "service": "calendar", "table": "events", "ids": cal_ids},
            ("agenda_in_description",),
        )


def _forbidden(b: TaskBuilder, a: _Agenda) -> None:
    b.forbid_call(
        "cancelled_meeting",
        "Cancelling a meeting (to recreate it, or by mistake).",
        "calendar",
        "cancel_event",
        {},
        {"event_id": a.event["id"]},
    )
