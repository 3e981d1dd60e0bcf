"""What the multi-turn families share (the user changes the work mid-task, docs/ARCHITECTURE.md §3, §5): the user's
persona and trigger, the docs-and-chat workspace, regexes for amounts and days.

In each, the scripted user (:mod:`coworkenv.harness.user_sim`) answers the agent's first finished turn with a
change: it edits a document itself (as the actor ``user``) or changes what it asked for, and the checks read the
final state and what the agent sent, so only a run that follows the change passes. The user's own edit never
scores by itself: checks on what the user wrote require a check on the agent's work.

- ``docs-revise-after-feedback`` (:mod:`~coworkenv.synth.generate.families.docs_revision`): the agent writes a
  summary line into a proposal, the user then changes the figure (and on hard, the deadline) in the document and
  asks for the summary to be fixed and the final figures posted in chat;
- ``changed-requirements`` (:mod:`~coworkenv.synth.generate.families.changed_requirements`): the agent sets a
  ticket's priority and assignee, then the user (after adding a note from a call) changes both, and on hard asks
  for an internal note on why;
- ``meeting-notes-followup`` (:mod:`~coworkenv.synth.generate.families.meeting_notes`): the agent lists the action
  items of today's meeting notes, the user adds one more to the notes and asks for the updated list to be posted
  (and on hard, the new item's owner told by DM).
"""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.base import (
    Json,
    TaskBuilder,
)
from coworkenv.synth.generate.families.kit.names import AGENTS, USER, Staff, slug

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
    for n in range(b.n_filler()):
        b.add(
            "chat",
            "messages",
            {
                "id": b.uid("M"),
                "channel_id": b.rng.choice(list(ids.values())),
                "user_id": b.rng.choice(members[1:]),
                "text": b.book.chat(),
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
def possessive_of(name: str) -> str:
    return f"{name}'" if name.endswith("s") else f"{name}'s"
