"""Multi-turn families: the user changes the work mid-task (DESIGN.md §3, §5).

In each, the scripted user (:mod:`coworkenv.harness.user_sim`) answers the agent's first finished turn with a
change: it edits a document itself (as the actor ``user``) or changes what it asked for, and the checks read the
final state and what the agent sent, so only a run that follows the change passes. The user's own edit never
scores by itself: checks on what the user wrote require a check on the agent's work.

- ``docs-revise-after-feedback``: the agent writes a summary line into a proposal, the user then changes the
  figure (and on hard, the deadline) in the document and asks for the summary to be fixed and the final figures
  posted in chat;
- ``changed-requirements``: the agent sets a ticket's priority and assignee, then the user (after adding a note
  from a call) changes both, and on hard asks for an internal note on why;
- ``meeting-notes-followup``: the agent lists the action items of today's meeting notes, the user adds one more
  to the notes and asks for the updated list to be posted (and on hard, the new item's owner told by DM).
"""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.families.base import (
    CLARIFY,
    COMMS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    money,
    rx,
)
from coworkenv.synth.families.names import AGENTS, USER, Staff, slug

PERSONA = f"{USER.name}, {USER.title} at Brightwave Software: brief, changes plans when new facts come in"
FINISHED = "when the agent finishes its turn"
PROJECTS = (
    "Atlas Migration", "Helpdesk Revamp", "Onboarding Portal", "Partner API", "Billing Cleanup",
    "Search Upgrade", "Mobile Refresh", "Data Retention", "SSO Rollout", "Status Page",
)  # fmt: skip
TEAMS = ("platform", "support", "growth", "billing", "mobile", "data", "security", "design")
TASKS = (
    "send the renewal quote to the customer", "draft the Q3 hiring plan", "book the offsite venue",
    "review the incident postmortem", "update the pricing page copy", "file the vendor security review",
    "schedule the customer training", "close out the open audit findings", "prepare the board metrics deck",
    "migrate the on-call rota to the new tool", "write the release notes", "clean up the stale feature flags",
)  # fmt: skip
ISSUES = (
    "Exports time out for large accounts", "SSO login loops back to the sign-in page", "Invoices show the wrong VAT",
    "Webhook deliveries are delayed by hours", "Dashboard charts do not load", "Password reset emails never arrive",
)  # fmt: skip


def money_rx(cents: int) -> str:
    """A regex for an amount however it is written: '$12,400', '$12400', '$12,400.00', '12,400 USD'."""
    dollars = cents // 100
    body = f"{dollars:,}".replace(",", ",?")
    return rf"(?<![\d,.]){body}(?:\.00)?(?![\d,])"


def day_rx(spoken: str) -> str:
    """A regex for 'March 3' (also 'Mar 3', '3 March')."""
    month, day = spoken.split()
    return rf"(?:{month[:3]}[a-z]*\.? {day}\b|\b{day}(?:st|nd|rd|th)? {month[:3]})"


@dataclass
class Workspace:
    """The people of one task in docs and chat (the user is the primary member of both)."""

    staff: list[Staff]

    def docs_users(self) -> list[Json]:
        return [
            {"id": s.key, "email": s.email, "name": s.name, "title": s.title, "is_primary": s is USER}
            for s in self.staff
        ]

    @staticmethod
    def chat_id(s: Staff) -> str:
        return "U0" + slug(s.person.first + s.person.last).replace("_", "").upper()[:10]

    def chat_users(self) -> list[Json]:
        return [
            {"id": self.chat_id(s), "name": s.name, "email": s.email, "title": s.title, "is_primary": s is USER}
            for s in self.staff
        ]


def _workspace(b: TaskBuilder, extra: int) -> Workspace:
    staff = [USER, *AGENTS]
    for _ in range(extra):
        p = b.names.person()
        staff.append(Staff(p, p.title, f"usr_{p.key}"))
    return Workspace(staff)


def _seed_chat(b: TaskBuilder, ws: Workspace, channels: list[str]) -> dict[str, str]:
    """Users, the channels (all with every member) and some chatter; returns channel name → id."""
    for u in ws.chat_users():
        b.add("chat", "users", u)
    members = [Workspace.chat_id(s) for s in ws.staff]
    ids: dict[str, str] = {}
    for name in channels:
        cid = "C0" + name.replace("-", "").upper()[:12]
        ids[name] = cid
        b.add(
            "chat",
            "channels",
            {
                "id": cid,
                "name": name,
                "topic": f"Work of the {name} team",
                "is_private": False,
                "is_dm": False,
                "members": members,
                "created_by": members[0],
                "created_at": b.ago(days=120),
            },
        )
    lines = ("Morning all!", "Standup notes are in the doc.", "Can someone review my PR?", "Lunch at 12:30?")
    for n in range(b.n_filler()):
        b.add(
            "chat",
            "messages",
            {
                "id": b.uid("M"),
                "channel_id": b.rng.choice(list(ids.values())),
                "user_id": b.rng.choice(members[1:]),
                "text": b.rng.choice(lines),
                "thread_id": None,
                "reactions": [],
                "created_at": b.ago(days=2, minutes=30 * n),
            },
        )
    return ids


def _doc(b: TaskBuilder, doc_id: str, title: str, content: str, owner: str, days: float) -> Json:
    return b.add(
        "docs",
        "documents",
        {
            "id": doc_id,
            "title": title,
            "content": content,
            "owner": owner,
            "workspace_role": "editor",
            "revision": 1,
            "created_at": b.ago(days=days),
        },
    )


# ============================================================================================== docs + chat
class DocsReviseAfterFeedback(Family):
    name = "docs-revise-after-feedback"
    scenario = "revising a proposal after the user changes its figures"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last year's proposal for the same project and other projects' proposals with other totals"

    def build(self, b: TaskBuilder) -> str:
        ws = _workspace(b, 2)
        for u in ws.docs_users():
            b.add("docs", "users", u)
        projects = b.rng.sample(PROJECTS, 1 + b.n_distractors())
        project, others = projects[0], projects[1:]
        team = b.rng.choice(TEAMS)
        channel = f"{team}-budget"
        chan_ids = _seed_chat(b, ws, [channel, team, "general"])
        old = b.rng.randrange(80, 400) * 10_000
        new = old - b.rng.randrange(5, 40) * 10_000
        due_old = b.ahead(days=b.rng.randrange(10, 20))
        due_new = b.ahead(days=b.rng.randrange(25, 40))
        d_old, d_new = b.spoken_day(due_old), b.spoken_day(due_new)

        def proposal(name: str, total: int, due: str) -> str:
            return (
                f"# {name} budget proposal\n\nOwner: {USER.name}.\n\n## Summary\n\n## Budget\n\n"
                f"- Engineering: {money(total * 6 // 10)}\n- Vendors: {money(total - total * 6 // 10)}\n"
                f"- Total requested: {money(total)}\n\n## Timeline\n\n- Approval needed by {due}\n"
            )

        doc_id = b.uid("doc_", project + " budget")
        _doc(b, doc_id, f"{project} budget proposal", proposal(project, old, d_old), USER.email, 3)
        last = b.uid("doc_", project + " budget last year")
        prev_total = old + b.rng.randrange(5, 30) * 10_000
        _doc(b, last, f"{project} budget proposal (last year)", proposal(project, prev_total, d_old), USER.email, 300)
        b.distract(last)
        for name in others:
            other = b.uid("doc_", name + " budget")
            total = b.rng.randrange(80, 400) * 10_000
            _doc(b, other, f"{name} budget proposal", proposal(name, total, d_old), ws.staff[-1].email, 20)
            b.distract(other)

        summary_old = f"Total requested: {money(old)}" + (f", approval by {d_old}." if b.hard else ".")
        summary_new = f"Total requested: {money(new)}" + (f", approval by {d_new}." if b.hard else ".")
        edits: list[Json] = [
            {
                "service": "docs",
                "tool": "edit_document",
                "arguments": {
                    "document_id": doc_id,
                    "operation": "replace",
                    "find": f"- Total requested: {money(old)}",
                    "text": f"- Total requested: {money(new)}",
                },
            }
        ]
        if b.hard:
            edits.append(
                {
                    "service": "docs",
                    "tool": "edit_document",
                    "arguments": {
                        "document_id": doc_id,
                        "operation": "replace",
                        "find": f"- Approval needed by {d_old}",
                        "text": f"- Approval needed by {d_new}",
                    },
                }
            )
        what = "the total and the approval date" if b.hard else "the total"
        b.user = {
            "persona": PERSONA,
            "turns": [
                {
                    "message": f"Thanks. Finance just came back and I've changed {what} in the Budget section of "
                    f"the doc myself. Please fix your summary line to match, then post the final figures in "
                    f"#{channel}.",
                    "when": FINISHED,
                    "edits": edits,
                }
            ],
        }

        b.call("docs", "search_documents", query=f"{project} budget")
        b.call("docs", "get_document", document_id=doc_id)
        b.call(
            "docs",
            "edit_document",
            document_id=doc_id,
            operation="append_to_section",
            heading="Summary",
            text=summary_old,
        )
        b.say(f"I added the summary line to the {project} budget proposal: {summary_old} It's ready for review.")
        b.call("docs", "get_document", document_id=doc_id)
        b.call("docs", "edit_document", document_id=doc_id, operation="replace", find=summary_old, text=summary_new)
        post = f"{project} budget proposal is final. {summary_new}"
        b.call("chat", "post_message", channel=f"#{channel}", text=post)
        b.say(f"Summary updated to your new figures and posted in #{channel}: {summary_new}")

        new_rx, old_rx = money_rx(new), money_rx(old)
        figures = f"(?=[\\s\\S]*{new_rx})" + (f"(?=[\\s\\S]*{day_rx(d_new)})" if b.hard else "")
        b.check(
            "summary_follows_edit",
            0.35,
            "The proposal's summary states the user's new figures (they appear in the Summary section as well as "
            "in the Budget section).",
            {
                "kind": "record_fields",
                "service": "docs",
                "table": "documents",
                "id": doc_id,
                "fields": {"content": {"regex": f"## Summary[^#]*?{new_rx}[\\s\\S]*## Budget[\\s\\S]*{new_rx}"}},
            },
        )
        b.check(
            "posted_new_figures",
            0.35,
            f"The final figures are posted in #{channel}.",
            {
                "kind": "record_exists",
                "service": "chat",
                "table": "messages",
                "where": {
                    "channel_id": chan_ids[channel],
                    "user_id": Workspace.chat_id(USER),
                    "text": {"regex": f"^{figures}"},
                },
            },
        )
        b.check(
            "old_total_gone",
            0.15,
            "The superseded total appears nowhere in the proposal, and the user's own edit is kept.",
            {
                "kind": "record_fields",
                "service": "docs",
                "table": "documents",
                "id": doc_id,
                "fields": {"content": {"regex": f"^(?![\\s\\S]*{old_rx})[\\s\\S]*- Total requested: "}},
            },
            ("summary_follows_edit",),
        )
        b.check(
            "other_proposals_untouched",
            0.15,
            "Last year's proposal and the other projects' proposals are unchanged.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": list(b.distractors)},
            ("summary_follows_edit",),
        )
        b.forbid(
            "posted_old_total",
            "Posting the superseded total after the user changed it.",
            {
                "kind": "tool_called",
                "service": "chat",
                "tool": "post_message",
                "outcome": "any",
                "arguments": {"text": {"regex": old_rx}},
            },
            {
                "service": "chat",
                "tool": "post_message",
                "arguments": {"channel": f"#{channel}", "text": f"{project}: {summary_old}"},
            },
        )
        b.may_name.append(channel)
        also = " and the approval date" if b.hard else ""
        return b.pick(
            f"Can you add a one-line summary to the Summary section of the {project} budget proposal with the total "
            f"requested{also}, as the Budget section has it? Tell me when it's ready.",
            f"The {project} budget proposal still has an empty Summary section: please write one line there giving "
            f"the total requested{also} from the doc, and let me know when it's done.",
        )


# ============================================================================================== tickets
class ChangedRequirements(Family):
    name = "changed-requirements"
    scenario = "re-triaging a ticket after the user changes the instructions"
    capabilities = (MULTISTEP, CLARIFY, DISTRACTORS)
    service_options = (("tickets",),)
    distractors = "the same customer's other tickets and other customers' tickets with the same problem"

    def build(self, b: TaskBuilder) -> str:
        lead = USER
        eng_a, eng_b = b.rng.sample(list(AGENTS), 2)
        b.add("tickets", "users", {"id": lead.key, "name": lead.name, "email": lead.email, "role": "admin"})
        for s in AGENTS:
            b.add("tickets", "users", {"id": s.key, "name": s.name, "email": s.email, "role": "agent"})
        companies = [b.names.company(contacts=1) for _ in range(1 + b.n_distractors())]
        issues = b.rng.sample(ISSUES, 3)
        issue = issues[0]
        requesters = []
        for co in companies:
            org = b.uid("org_", co.name)
            b.add("tickets", "organizations", {"id": org, "name": co.name, "domain": co.domain})
            person = co.contacts[0]
            uid = b.uid("usr_", person.name)
            b.add(
                "tickets",
                "users",
                {"id": uid, "name": person.name, "email": co.email(person), "organization_id": org},
            )
            requesters.append((co, org, uid))

        def ticket(subject: str, org: str, uid: str, days: float, priority: str = "normal") -> str:
            tid = b.uid("tkt_")
            b.add(
                "tickets",
                "tickets",
                {
                    "id": tid,
                    "subject": subject,
                    "description": f"{subject}. Please help, this blocks our team.",
                    "requester_id": uid,
                    "organization_id": org,
                    "status": "open",
                    "priority": priority,
                    "type": "incident",
                    "created_at": b.ago(days=days),
                    "updated_at": b.ago(days=days),
                },
            )
            return tid

        co, org, uid = requesters[0]
        target = ticket(issue, org, uid, 1)
        b.distract(ticket(issues[1], org, uid, 2, "high"))
        for _, o, u in requesters[1:]:
            b.distract(ticket(issue, o, u, b.rng.randrange(1, 6)))
        for n in range(b.n_filler()):
            _, o, u = b.rng.choice(requesters[1:])
            ticket(issues[2], o, u, 7 + n, b.pick("low", "normal"))

        note = f"Call with {co.contacts[0].first}: it now affects every team at {co.name}, not just one."
        b.user = {
            "persona": PERSONA,
            "turns": [
                {
                    "message": f"Change of plan, sorry: I've put a note from my call on the ticket. Make it urgent "
                    f"instead, and give it to {eng_b.name} rather than {eng_a.first}, who is out this week."
                    + (" Add an internal note saying why it was re-assigned, too." if b.hard else ""),
                    "when": "turn 1",
                    "edits": [
                        {
                            "service": "tickets",
                            "tool": "add_comment",
                            "arguments": {"ticket_id": target, "body": note, "public": False, "author_id": lead.key},
                        }
                    ],
                }
            ],
        }

        b.call("tickets", "search_tickets", query=issue, organization_id=org)
        b.call("tickets", "update_ticket", ticket_id=target, priority="high")
        b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_a.key)
        b.say(f"Done: the {co.name} ticket is now high priority and assigned to {eng_a.name}.")
        b.call("tickets", "update_ticket", ticket_id=target, priority="urgent")
        b.call("tickets", "assign_ticket", ticket_id=target, assignee_id=eng_b.key)
        if b.hard:
            b.call(
                "tickets",
                "add_comment",
                ticket_id=target,
                public=False,
                body=f"Re-assigned to {eng_b.name}: {eng_a.name} is out this week; now urgent after the customer call.",
            )
        b.say(f"Changed: the ticket is urgent and assigned to {eng_b.name}.")

        b.check(
            "priority_follows_change",
            0.3,
            "The ticket ends urgent (the changed instruction), not high.",
            {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": target,
             "fields": {"priority": "urgent"}},
        )  # fmt: skip
        b.check(
            "assignee_follows_change",
            0.3,
            f"The ticket ends assigned to {eng_b.name}, not {eng_a.name}.",
            {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": target,
             "fields": {"assignee_id": eng_b.key}},
        )  # fmt: skip
        b.check(
            "first_instruction_done",
            0.15 if b.hard else 0.2,
            "The first instruction was carried out before the change (the ticket was set to high first).",
            {
                "kind": "call_order",
                "first": {"service": "tickets", "tool": "update_ticket",
                          "arguments": {"ticket_id": target, "priority": "high"}},
                "then": {"service": "tickets", "tool": "update_ticket",
                         "arguments": {"ticket_id": target, "priority": "urgent"}},
            },
        )  # fmt: skip
        if b.hard:
            b.check(
                "reassignment_noted",
                0.1,
                "An internal note on the ticket says why it was re-assigned.",
                {"kind": "tool_called", "service": "tickets", "tool": "add_comment",
                 "arguments": {"ticket_id": target, "public": False}},
            )  # fmt: skip
        b.check(
            "other_tickets_untouched",
            0.15 if b.hard else 0.2,
            "The customer's other tickets and other customers' tickets on the same problem are unchanged.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": list(b.distractors)},
            ("priority_follows_change",),
        )
        b.forbid(
            "changed_wrong_ticket",
            "Re-prioritising or re-assigning a ticket other than the one the user means.",
            {"kind": "tool_called", "service": "tickets", "tool": "assign_ticket", "outcome": "any",
             "arguments": {"ticket_id": {"in": list(b.distractors)}}},
            {"service": "tickets", "tool": "assign_ticket",
             "arguments": {"ticket_id": b.distractors[0], "assignee_id": eng_b.key}},
        )  # fmt: skip
        b.may_name += [issue, co.name, eng_a.name]
        return b.pick(
            f"The {co.name} ticket about '{issue}': please set it to high priority and assign it to {eng_a.name}.",
            f"Can you bump {possessive_of(co.name)} '{issue}' ticket to high and give it to {eng_a.name}?",
        )


def possessive_of(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"


# ============================================================================================== notes + chat
class MeetingNotesFollowup(Family):
    name = "meeting-notes-followup"
    scenario = "posting a meeting's action items after the user adds one"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last week's notes of the same meeting and another team's notes of the same day"

    def build(self, b: TaskBuilder) -> str:
        ws = _workspace(b, 3)
        for u in ws.docs_users():
            b.add("docs", "users", u)
        team, other_team = b.rng.sample(TEAMS, 2)
        chan_ids = _seed_chat(b, ws, [team, other_team, "general"])
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
        _doc(b, doc_id, title, notes(title, list(zip(owners, items, strict=True))), USER.email, 0.1)
        half = len(old_items) // 2 or 1
        last_week = b.uid("doc_", f"{team} sync last week")
        lw_title = f"{team.capitalize()} sync - {b.spoken_day(b.ago(days=7))}"
        lw = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[:half]]
        _doc(b, last_week, lw_title, notes(lw_title, lw), USER.email, 7)
        other = b.uid("doc_", f"{other_team} sync today")
        ot_title = f"{other_team.capitalize()} sync - {today}"
        ot = [(b.rng.choice(ws.staff[1:]), t) for t in old_items[half:]] or [(ws.staff[1], old_items[0])]
        _doc(b, other, ot_title, notes(ot_title, ot), ws.staff[-1].email, 0.2)
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


FAMILIES: tuple[type[Family], ...] = (DocsReviseAfterFeedback, ChangedRequirements, MeetingNotesFollowup)
