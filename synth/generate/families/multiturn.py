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

from coworkenv.synth.generate.families.base import (
    CLARIFY,
    COMMS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    money,
)
from coworkenv.synth.generate.families.names import AGENTS, USER, Staff, slug

PERSONA = f"{USER.name}, {USER.title} at Brightwave Software: brief, changes plans when new facts come in"
FINISHED: Json = {"on_finish": True}
"""The user turn's trigger: when the agent finishes its (first) turn."""
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


def workspace(b: TaskBuilder, extra: int) -> Workspace:
    staff = [USER, *AGENTS]
    for _ in range(extra):
        p = b.names.person()
        staff.append(Staff(p, p.title, f"usr_{p.key}"))
    return Workspace(staff)


def seed_chat(b: TaskBuilder, ws: Workspace, channels: list[str]) -> dict[str, str]:
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


def make_doc(b: TaskBuilder, doc_id: str, title: str, content: str, owner: str, days: float) -> Json:
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
@dataclass(frozen=True)
class _Budget:
    """One task's proposal: its project and document, the channel for the figures, the total before and after
    the user's edit, and the approval date before and after (spoken)."""

    project: str
    doc_id: str
    channel: str
    chan_id: str
    old: int
    new: int
    d_old: str
    d_new: str


def _proposal(name: str, total: int, due: str) -> str:
    return (
        f"# {name} budget proposal\n\nOwner: {USER.name}.\n\n## Summary\n\n## Budget\n\n"
        f"- Engineering: {money(total * 6 // 10)}\n- Vendors: {money(total - total * 6 // 10)}\n"
        f"- Total requested: {money(total)}\n\n## Timeline\n\n- Approval needed by {due}\n"
    )


class DocsReviseAfterFeedback(Family):
    name = "docs-revise-after-feedback"
    scenario = "revising a proposal after the user changes its figures"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last year's proposal for the same project and other projects' proposals with other totals"

    def build(self, b: TaskBuilder) -> str:
        p = self._seed(b)
        summary_old = f"Total requested: {money(p.old)}" + (f", approval by {p.d_old}." if b.hard else ".")
        summary_new = f"Total requested: {money(p.new)}" + (f", approval by {p.d_new}." if b.hard else ".")
        self._user_turn(b, p)
        b.call("docs", "search_documents", query=f"{p.project} budget")
        b.call("docs", "get_document", document_id=p.doc_id)
        b.call(
            "docs",
            "edit_document",
            document_id=p.doc_id,
            operation="append_to_section",
            heading="Summary",
            text=summary_old,
        )
        b.say(f"I added the summary line to the {p.project} budget proposal: {summary_old} It's ready for review.")
        b.call("docs", "get_document", document_id=p.doc_id)
        b.call("docs", "edit_document", document_id=p.doc_id, operation="replace", find=summary_old, text=summary_new)
        post = f"{p.project} budget proposal is final. {summary_new}"
        b.call("chat", "post_message", channel=f"#{p.channel}", text=post)
        b.say(f"Summary updated to your new figures and posted in #{p.channel}: {summary_new}")
        self._checks(b, p, summary_old)
        b.may_name.append(p.channel)
        also = " and the approval date" if b.hard else ""
        return b.pick(
            f"Can you add a one-line summary to the Summary section of the {p.project} budget proposal with the "
            f"total requested{also}, as the Budget section has it? Tell me when it's ready.",
            f"The {p.project} budget proposal still has an empty Summary section: please write one line there "
            f"giving the total requested{also} from the doc, and let me know when it's done.",
        )

    @staticmethod
    def _seed(b: TaskBuilder) -> _Budget:
        """People, channels, the proposal, and as distractors last year's proposal and other projects'."""
        ws = workspace(b, 2)
        for u in ws.docs_users():
            b.add("docs", "users", u)
        projects = b.rng.sample(PROJECTS, 1 + b.n_distractors())
        project, others = projects[0], projects[1:]
        team = b.rng.choice(TEAMS)
        channel = f"{team}-budget"
        chan_ids = seed_chat(b, ws, [channel, team, "general"])
        old = b.rng.randrange(80, 400) * 10_000
        new = old - b.rng.randrange(5, 40) * 10_000
        due_old = b.ahead(days=b.rng.randrange(10, 20))
        due_new = b.ahead(days=b.rng.randrange(25, 40))
        d_old, d_new = b.spoken_day(due_old), b.spoken_day(due_new)
        doc_id = b.uid("doc_", project + " budget")
        make_doc(b, doc_id, f"{project} budget proposal", _proposal(project, old, d_old), USER.email, 3)
        last = b.uid("doc_", project + " budget last year")
        prev_total = old + b.rng.randrange(5, 30) * 10_000
        title = f"{project} budget proposal (last year)"
        make_doc(b, last, title, _proposal(project, prev_total, d_old), USER.email, 300)
        b.distract(last)
        for name in others:
            other = b.uid("doc_", name + " budget")
            total = b.rng.randrange(80, 400) * 10_000
            make_doc(b, other, f"{name} budget proposal", _proposal(name, total, d_old), ws.staff[-1].email, 20)
            b.distract(other)
        return _Budget(project, doc_id, channel, chan_ids[channel], old, new, d_old, d_new)

    @staticmethod
    def _user_turn(b: TaskBuilder, p: _Budget) -> None:
        """When the agent finishes its first turn, the user changes the total (hard: and the date) itself."""

        def replace(find: str, text: str) -> Json:
            arguments = {"document_id": p.doc_id, "operation": "replace", "find": find, "text": text}
            return {"service": "docs", "tool": "edit_document", "arguments": arguments}

        edits = [replace(f"- Total requested: {money(p.old)}", f"- Total requested: {money(p.new)}")]
        if b.hard:
            edits.append(replace(f"- Approval needed by {p.d_old}", f"- Approval needed by {p.d_new}"))
        what = "the total and the approval date" if b.hard else "the total"
        message = (
            f"Thanks. Finance just came back and I've changed {what} in the Budget section of the doc myself. "
            f"Please fix your summary line to match, then post the final figures in #{p.channel}."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": edits}]}

    @staticmethod
    def _checks(b: TaskBuilder, p: _Budget, summary_old: str) -> None:
        """The summary follows the user's figures (0.3), they are posted (0.3), the old total is gone (0.1);
        the other proposals are untouched (0.3: more than the pass mark leaves, so editing one fails)."""
        new_rx, old_rx = money_rx(p.new), money_rx(p.old)
        figures = f"(?=[\\s\\S]*{new_rx})" + (f"(?=[\\s\\S]*{day_rx(p.d_new)})" if b.hard else "")
        both = f"^(?=[\\s\\S]*## Summary[^#]*?{new_rx})(?=[\\s\\S]*## Budget[^#]*{new_rx})"
        b.check(
            "summary_follows_edit",
            0.3,
            "The proposal's summary states the user's new figures (they appear in the Summary section as well as "
            "in the Budget section).",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": p.doc_id,
             "fields": {"content": {"regex": both}}},
        )  # fmt: skip
        b.check(
            "posted_new_figures",
            0.3,
            f"The final figures are posted in #{p.channel}.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {"channel_id": p.chan_id, "user_id": Workspace.chat_id(USER), "text": {"regex": f"^{figures}"}}},
        )  # fmt: skip
        b.check(
            "old_total_gone",
            0.1,
            "The superseded total appears nowhere in the proposal, and the user's own edit is kept.",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": p.doc_id,
             "fields": {"content": {"regex": f"^(?![\\s\\S]*{old_rx})[\\s\\S]*- Total requested: "}}},
            ("summary_follows_edit",),
        )  # fmt: skip
        b.check(
            "other_proposals_untouched",
            0.3,
            "Last year's proposal and the other projects' proposals are unchanged.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": list(b.distractors)},
            ("summary_follows_edit",),
        )
        b.forbid(
            "posted_old_total",
            "Posting the superseded total after the user changed it.",
            {"kind": "tool_called", "service": "chat", "tool": "post_message", "outcome": "any",
             "arguments": {"text": {"regex": old_rx}}},
            {"service": "chat", "tool": "post_message",
             "arguments": {"channel": f"#{p.channel}", "text": f"{p.project}: {summary_old}"}},
        )  # fmt: skip


def possessive_of(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"
