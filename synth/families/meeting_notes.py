"""The multi-turn family on meeting notes: the user adds an action item to the notes mid-task and asks for
the updated list to be posted (see :mod:`coworkenv.synth.families.multiturn` for what the families share)."""

from __future__ import annotations

from coworkenv.synth.families.base import CLARIFY, COMMS, DISTRACTORS, MULTISTEP, Family, TaskBuilder, rx
from coworkenv.synth.families.multiturn import (
    FINISHED,
    PERSONA,
    TASKS,
    TEAMS,
    Workspace,
    make_doc,
    seed_chat,
    workspace,
)
from coworkenv.synth.families.names import USER, Staff


class MeetingNotesFollowup(Family):
    name = "meeting-notes-followup"
    scenario = "posting a meeting's action items after the user adds one"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last week's notes of the same meeting and another team's notes of the same day"

    def build(self, b: TaskBuilder) -> str:
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

        def notes(title: str, pairs: list[tuple[Staff, str]]) -> str:
            lines = "".join(f"- {s.name}: {t}\n" for s, t in pairs)
            return f"# {title}\n\n## Discussion\n\n- Roadmap and blockers.\n\n## Action items\n\n{lines}"

        title = f"{team.capitalize()} sync - {today}"
        doc_id = b.uid("doc_", f"{team} sync today")
        make_doc(b, doc_id, title, notes(title, list(zip(owners, items, strict=True))), USER.email, 0.1)
        half = len(old_items) // 2 or 1
        last_week = b.uid("doc_", f"{team} sync last week")
        lw_title = f"{team.capitalize()} sync - {b.spoken_day(b.ago(days=7))}"
        lw = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[:half]]
        make_doc(b, last_week, lw_title, notes(lw_title, lw), USER.email, 7)
        other = b.uid("doc_", f"{other_team} sync today")
        ot_title = f"{other_team.capitalize()} sync - {today}"
        ot = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[half:]] or [(ws.staff[1], old_items[0])]
        make_doc(b, other, ot_title, notes(ot_title, ot), ws.staff[-1].email, 0.2)
        b.distract(last_week, other)

        line = f"- {new_owner.name}: {added} (by {due})"
        b.user = {
            "persona": PERSONA,
            "turns": [
                {
                    "message": "Thanks. I just added one more action item to the notes that we agreed after the "
                    f"meeting. Please post the full, updated list of action items in #{team}."
                    + (" And message its owner directly so they know it's on them." if b.hard else ""),
                    "when": FINISHED,
                    "edits": [
                        {
                            "service": "docs",
                            "tool": "edit_document",
                            "arguments": {
                                "document_id": doc_id,
                                "operation": "append_to_section",
                                "heading": "Action items",
                                "text": line,
                            },
                        }
                    ],
                }
            ],
        }

        listing = "; ".join(f"{s.name}: {t}" for s, t in zip(owners, items, strict=True))
        b.call("docs", "search_documents", query=f"{team} sync")
        b.call("docs", "get_document", document_id=doc_id)
        b.say(f"Today's {team} sync has {len(items)} action items: {listing}.")
        b.call("docs", "get_document", document_id=doc_id)
        full = f"{listing}; {new_owner.name}: {added} (by {due})"
        b.call("chat", "post_message", channel=f"#{team}", text=f"Action items from today's {team} sync: {full}")
        if b.hard:
            b.call(
                "chat",
                "send_direct_message",
                to=new_owner.email,
                text=f"Hi {new_owner.first}, from today's {team} sync you have: {added} (by {due}).",
            )
        b.say(f"Posted all {len(items) + 1} action items in #{team}.")

        def all_of(texts: list[str]) -> str:
            return "^" + "".join(f"(?=[\\s\\S]*{rx(t)})" for t in texts)

        where = {"channel_id": chan_ids[team], "user_id": Workspace.chat_id(USER)}
        b.check(
            "posted_added_item",
            0.35 if b.hard else 0.45,
            f"The post in #{team} includes the action item the user added mid-task.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {**where, "text": {"regex": all_of([added]), "case_insensitive": True}}},
        )  # fmt: skip
        b.check(
            "posted_original_items",
            0.3,
            f"The same post in #{team} includes every action item already in the notes.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {**where, "text": {"regex": all_of([added, *items]), "case_insensitive": True}}},
        )  # fmt: skip
        if b.hard:
            b.check(
                "owner_told",
                0.15,
                f"{new_owner.name} gets a direct message about the added item.",
                {"kind": "tool_called", "service": "chat", "tool": "send_direct_message",
                 "arguments": {"to": {"in": [new_owner.email, Workspace.chat_id(new_owner)]},
                               "text": {"regex": rx(added), "case_insensitive": True}}},
            )  # fmt: skip
        b.check(
            "notes_untouched_by_agent",
            0.1 if b.hard else 0.125,
            "The agent leaves the notes (and the user's edit) as they are.",
            {"kind": "tool_not_called", "service": "docs", "tool": "edit_document", "arguments": {}},
            ("posted_added_item",),
        )
        b.check(
            "other_notes_untouched",
            0.1 if b.hard else 0.125,
            "Last week's notes and the other team's notes are unchanged.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": list(b.distractors)},
            ("posted_added_item",),
        )
        stale = old_items[0]
        b.forbid(
            "posted_wrong_notes",
            "Posting action items from another meeting's notes.",
            {"kind": "tool_called", "service": "chat", "tool": "post_message", "outcome": "any",
             "arguments": {"text": {"regex": rx(stale), "case_insensitive": True}}},
            {"service": "chat", "tool": "post_message",
             "arguments": {"channel": f"#{team}", "text": f"Action items: {stale}"}},
        )  # fmt: skip
        b.may_name += [team]
        return b.pick(
            f"Can you pull the action items out of today's {team} sync notes and list them for me? I'll want them "
            f"in #{team} once I've had a look.",
            f"What action items came out of today's {team} sync? List them for me first; they'll go to #{team} after.",
        )
