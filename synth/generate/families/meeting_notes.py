"""The multi-turn family on meeting notes: the user adds an action item to the notes mid-task and asks for
the updated list to be posted (see :mod:`coworkenv.synth.generate.families.kit.multiturn` for what the families share)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, COMMS, DISTRACTORS, MULTISTEP, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.multiturn import (
    FINISHED,
    PERSONA,
    TASKS,
    TEAMS,
    Workspace,
    make_doc,
    seed_chat,
    workspace,
)
from coworkenv.synth.generate.families.kit.names import USER, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family


@dataclass(frozen=True)
class _Meeting:
    """Today's sync of one team: its channel and notes, the action items with their owners, the item the user
    adds mid-task (its owner and due day), and an item of another meeting's notes."""

    team: str
    chan_id: str
    doc_id: str
    items: list[str]
    owners: list[Staff]
    added: str
    new_owner: Staff
    due: str
    stale: str


def _notes(title: str, pairs: list[tuple[Staff, str]]) -> str:
    lines = "".join(f"- {s.name}: {t}\n" for s, t in pairs)
    return f"# {title}\n\n## Discussion\n\n- Roadmap and blockers.\n\n## Action items\n\n{lines}"


def _all_of(texts: list[str]) -> str:
    """A regex for a text that contains every one of these, in any order."""
    return "^" + "".join(f"(?=[\\s\\S]*{rx(t)})" for t in texts)


@register_family
class MeetingNotesFollowup(Family):
    name = "meeting-notes-followup"
    scenario = "posting a meeting's action items after the user adds one"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last week's notes of the same meeting and another team's notes of the same day"

    def build(self, b: TaskBuilder) -> str:
        m = self._seed(b)
        self._user_turn(b, m)
        self._reference(b, m)
        self._checks(b, m)
        b.may_name += [m.team]
        ask = Ask(
            steps=(
                b.pick(
                    "pull the action items out of today's {team} sync notes",
                    "go through the notes of today's {team} sync",
                    "find the action items from today's {team} sync",
                ),
            ),
            context=b.pick(
                "I'll want them in #{team} once I've had a look.",
                "They'll go to #{team} after I've checked them.",
                "",
            ),
            avoid=b.pick("Don't post anything yet.", "Don't edit the notes.", ""),
            report=b.pick("list them for me", "send me the list first", "tell me what they are"),
            topic="{team} sync action items",
        )
        backdrop(b)
        return compose(b, ask, team=m.team)

    @staticmethod
    def _user_turn(b: TaskBuilder, m: _Meeting) -> None:
        """When the agent finishes its first turn, the user adds an action item to the notes and asks for the
        full list to be posted (hard: and its owner told directly)."""
        line = f"- {m.new_owner.name}: {m.added} (by {m.due})"
        message = (
            "Thanks. I just added one more action item to the notes that we agreed after the meeting. Please post "
            f"the full, updated list of action items in #{m.team}."
            + (" And message its owner directly so they know it's on them." if b.hard else "")
        )
        edit = {"document_id": m.doc_id, "operation": "append_to_section", "heading": "Action items", "text": line}
        step = {"service": "docs", "tool": "edit_document", "arguments": edit}
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": [step]}]}

    @staticmethod
    def _reference(b: TaskBuilder, m: _Meeting) -> None:
        team, added, new_owner, due = m.team, m.added, m.new_owner, m.due
        listing = "; ".join(f"{s.name}: {t}" for s, t in zip(m.owners, m.items, strict=True))
        b.call("docs", "search_documents", query=f"{team} sync")
        b.call("docs", "get_document", document_id=m.doc_id)
        b.say(f"Today's {team} sync has {len(m.items)} action items: {listing}.")
        b.call("docs", "get_document", document_id=m.doc_id)
        full = f"{listing}; {new_owner.name}: {added} (by {due})"
        b.call("chat", "post_message", channel=f"#{team}", text=f"Action items from today's {team} sync: {full}")
        if b.hard:
            b.call(
                "chat",
                "send_direct_message",
                to=new_owner.email,
                text=f"Hi {new_owner.first}, from today's {team} sync you have: {added} (by {due}).",
            )
        b.say(f"Posted all {len(m.items) + 1} action items in #{team}.")
        with b.alternative():  # the notes found in the listing by title, the owner told before the post
            b.call("docs", "search_documents", "notes", query=team)
            b.call("docs", "get_document", document_id=m.doc_id)
            b.say(f"Action items of today's {team} sync: {listing}.")
            b.call("docs", "get_document", document_id=m.doc_id)
            if b.hard:
                b.call("chat", "send_direct_message", to=new_owner.email, text=f"New item for you: {added} ({due}).")
            b.call("chat", "post_message", channel=f"#{team}", text=f"Updated action items ({team}): {full}")
            b.say("Posted.")

    @staticmethod
    def _seed(b: TaskBuilder) -> _Meeting:
        """People, channels, today's notes, and as distractors last week's notes and another team's of today."""
        ws = workspace(b, 3)
        for u in ws.docs_users():
            b.add("docs", "users", u)
        team, other_team = b.rng.sample(TEAMS, 2)
        chan_ids = seed_chat(b, ws, [team, other_team, "general"])
        tasks = b.rng.sample(TASKS, 2 + b.targets + 2 + b.n_distractors())
        n_items = 1 + b.targets
        items, added, old_items = tasks[:n_items], tasks[n_items], tasks[n_items + 1 :]
        owners = [b.rng.choice(ws.staff[1:]) for _ in items]
        new_owner = b.rng.choice(ws.staff[1:])
        today = b.spoken_day(b.now_iso)
        due = b.spoken_day(b.ahead(days=b.rng.randrange(3, 10)))
        title = f"{team.capitalize()} sync - {today}"
        doc_id = b.uid("doc_", f"{team} sync today")
        make_doc(b, doc_id, title, _notes(title, list(zip(owners, items, strict=True))), USER.email, 0.1)
        half = len(old_items) // 2 or 1
        last_week = b.uid("doc_", f"{team} sync last week")
        lw_title = f"{team.capitalize()} sync - {b.spoken_day(b.ago(days=7))}"
        lw = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[:half]]
        make_doc(b, last_week, lw_title, _notes(lw_title, lw), USER.email, 7)
        other = b.uid("doc_", f"{other_team} sync today")
        ot_title = f"{other_team.capitalize()} sync - {today}"
        ot = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[half:]] or [(ws.staff[1], old_items[0])]
        make_doc(b, other, ot_title, _notes(ot_title, ot), ws.staff[-1].email, 0.2)
        b.distract(last_week, other)
        return _Meeting(team, chan_ids[team], doc_id, items, owners, added, new_owner, due, old_items[0])

    @staticmethod
    def _checks(b: TaskBuilder, m: _Meeting) -> None:
        """The post has the added item and all the others (0.4; hard: 0.3, and the owner told 0.1); two guards
        of 0.3 that count only with that work done, so editing the notes, or another meeting's, fails the task."""
        where = {"channel_id": m.chan_id, "user_id": Workspace.chat_id(USER)}
        b.check(
            "posted_added_item",
            0.15 if b.hard else 0.2,
            f"The post in #{m.team} includes the action item the user added mid-task.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {**where, "text": {"regex": _all_of([m.added]), "case_insensitive": True}}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "posted_original_items",
            0.15 if b.hard else 0.2,
            f"The same post in #{m.team} includes every action item already in the notes.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {**where, "text": {"regex": _all_of([m.added, *m.items]), "case_insensitive": True}}},
            after_turn=1,
        )  # fmt: skip
        work = ["posted_original_items"]
        if b.hard:
            to = [m.new_owner.email, Workspace.chat_id(m.new_owner)]
            b.check(
                "owner_told",
                0.1,
                f"{m.new_owner.name} gets a direct message about the added item.",
                {"kind": "tool_called", "service": "chat", "tool": "send_direct_message",
                 "arguments": {"to": {"in": to}, "text": {"regex": rx(m.added), "case_insensitive": True}}},
                after_turn=1,
            )  # fmt: skip
            work.append("owner_told")
        b.check(
            "notes_untouched_by_agent",
            0.3,
            "The agent leaves the notes (and the user's edit) as they are.",
            {"kind": "tool_not_called", "service": "docs", "tool": "edit_document", "arguments": {}},
            tuple(work),
        )
        b.check(
            "other_notes_untouched",
            0.3,
            "Last week's notes and the other team's notes are unchanged.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": list(b.distractors)},
            tuple(work),
        )
        b.forbid(
            "posted_wrong_notes",
            "Posting action items from another meeting's notes.",
            {"kind": "tool_called", "service": "chat", "tool": "post_message", "outcome": "any",
             "arguments": {"text": {"regex": rx(m.stale), "case_insensitive": True}}},
            {"service": "chat", "tool": "post_message",
             "arguments": {"channel": f"#{m.team}", "text": f"Action items: {m.stale}"}},
        )  # fmt: skip
