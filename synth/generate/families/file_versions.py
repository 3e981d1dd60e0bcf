"""A cross-service family on the shared drive and chat: share the final version of a customer proposal (not the
draft, not the superseded final) with the members of the account's channel, view only, and tell the channel."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import COMMS, CROSS, DISTRACTORS, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.files_common import Drive, drive
from coworkenv.synth.generate.families.kit.multiturn import Workspace, seed_chat, workspace
from coworkenv.synth.generate.families.kit.names import USER, Company, Staff, slug
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.reach import only
from coworkenv.synth.generate.families.kit.registry import register_family

DOCS = ("renewal proposal", "security questionnaire", "pricing proposal", "implementation plan", "statement of work")


@dataclass(frozen=True)
class _Share:
    company: Company
    doc: str
    final: Json
    team: list[Staff]
    channel: str
    chan_id: str


def _body(company: str, doc: str, status: str, total: int) -> str:
    scope = "## Scope\n\nSeats and support as agreed.\n\n"
    return f"# {company} {doc}\n\nStatus: {status}\n\n{scope}## Price\n\n${total:,} a year\n"


@register_family
class ShareFinalVersion(Family):
    name = "share-final-version"
    scenario = "sharing the right version of a file with the account team"
    capabilities = (CROSS, DISTRACTORS, COMMS)
    service_options = (("files", "chat"),)
    distractors = (
        "the draft and the superseded final of the same document; another customer's final; people not on the team"
    )

    def build(self, b: TaskBuilder) -> str:
        s = self._seed(b)
        self._reference(b, s)
        self._checks(b, s)
        _forbidden(b, s)
        b.may_name += [s.company.name, s.channel, s.doc]
        ask = Ask(
            steps=[
                "share the final {company} {doc} on the drive with everyone in #{channel}, view only",
                "let the channel know it's shared",
            ],
            context="The {company} {doc} is done.",
            avoid="Don't share the drafts or older versions",
            topic="the final {company} {doc}",
        )
        backdrop(b)
        return compose(b, ask, company=s.company.name, doc=s.doc, channel=s.channel)

    @staticmethod
    def _seed(b: TaskBuilder) -> _Share:
        ws = workspace(b, b.rng.randint(3, 5))
        x = b.names.company()
        team = b.rng.sample(ws.staff[1:], b.rng.randint(2, 3) if b.difficulty == "easy" else b.rng.randint(3, 4))
        channel = "acct-" + slug(x.name.split()[0]).replace("_", "-")
        seed_chat(b, ws, ["general", "sales"])
        chan_id = "C0ACCT" + slug(x.name.split()[0]).upper().replace("_", "")[:8]
        members = [Workspace.chat_id(s) for s in [USER, *team]]
        b.add("chat", "channels", {"id": chan_id, "name": channel, "topic": f"Account team for {x.name}",
                                   "is_private": False, "is_dm": False, "members": members,
                                   "created_by": members[0], "created_at": b.ago(days=90)})  # fmt: skip
        d = drive(b, list(ws.staff))
        doc = b.rng.choice(DOCS)
        final = ShareFinalVersion._versions(b, d, x, doc)
        d.filler(6 + 2 * b.n_filler())
        return _Share(x, doc, final, team, channel, chan_id)

    @staticmethod
    def _versions(b: TaskBuilder, d: Drive, x: Company, doc: str) -> Json:
        """The final, the draft, the superseded final (archived), and another customer's final; restricted."""
        total = b.rng.randrange(40, 400) * 1000
        title = f"{x.name} {doc}"
        names = (f"{title} v3.md", f"{title} v2.md", f"{title} v1.md") if b.hard else (
            f"{title} - final.md", f"{title} - draft.md", f"{title} - final (old pricing).md")  # fmt: skip
        final = d.file(names[0], _body(x.name, doc, "FINAL, approved", total), USER, "Customers", 1)
        draft = d.file(names[1], _body(x.name, doc, "DRAFT", total + 5000), USER, "Customers", 6)
        old = d.file(names[2], _body(x.name, doc, f"superseded by {names[0]}", total + 9000), USER, "Archive", 40)
        y = b.names.company()
        other = d.file(f"{y.name} {doc} - final.md", _body(y.name, doc, "FINAL, approved", total), USER, "Customers", 9)
        for f in (final, draft, old, other):
            f["workspace_role"] = None
        if b.hard:
            final["created_at"], draft["created_at"] = draft["created_at"], final["created_at"]
        b.distract(draft["id"], old["id"], other["id"])
        return final

    @staticmethod
    def _reference(b: TaskBuilder, s: _Share) -> None:
        fid, name = s.final["id"], s.final["name"]
        b.call("files", "search_files", "found", query=f"{s.company.name} {s.doc}")
        b.call("files", "read_file", file_id=fid)
        b.call("chat", "list_channels", query=s.channel)
        b.call("chat", "get_channel_history", channel=f"#{s.channel}")
        for m in s.team:
            b.call("files", "share_file", file_id=fid, email=m.email, role="viewer")
        b.call(
            "chat",
            "post_message",
            channel=f"#{s.channel}",
            text=f"I've shared '{name}' (final) with the team, view only.",
        )
        b.say(f"Shared '{name}' with {', '.join(m.name for m in s.team)} as viewers and told #{s.channel}.")
        with b.alternative():
            b.call("files", "list_files", folder_id="fld_customers")
            b.call("chat", "list_users")
            for m in reversed(s.team):
                b.call("files", "share_file", file_id=fid, email=m.email, role="viewer")
            b.call("chat", "post_message", channel=s.chan_id, text=f"The final {s.doc} is shared with you: {name}")
            b.say("Done.")

    @staticmethod
    def _checks(b: TaskBuilder, s: _Share) -> None:
        """The final shared with the whole team as viewers, and no one else (0.4), the channel told (0.3), the
        other versions as they were (0.3)."""
        b.check(
            "final_shared",
            0.4,
            f"The final {s.doc} is shared with every member of #{s.channel}, view only, and no one else.",
            {"kind": "record_fields", "service": "files", "table": "files", "id": s.final["id"],
             "fields": {"shares.email": only([m.email for m in s.team], also=[x["email"] for x in s.final["shares"]]),
                        "shares.role": {"not": {"contains": "editor"}}}},
        )  # fmt: skip
        b.check(
            "channel_told",
            0.3,
            f"A message in #{s.channel} says the final {s.doc} is shared.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {"channel_id": s.chan_id, "user_id": Workspace.chat_id(USER), "created_at": {"gte": b.now_iso},
                       "text": {"regex": rf"{rx(s.final['name'][:-3])}|final|{rx(s.doc)}", "case_insensitive": True}}},
        )  # fmt: skip
        b.check(
            "other_versions_untouched",
            0.3,
            "The draft, the superseded version and the other customer's file are not shared or changed.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": list(b.distractors)},
            ("final_shared",),
        )


def _forbidden(b: TaskBuilder, s: _Share) -> None:
    b.forbid_call(
        "shared_as_editor",
        "Giving edit rights on a customer proposal when view only was asked.",
        "files",
        "share_file",
        {"role": "editor"},
        {"file_id": s.final["id"], "email": s.team[0].email, "role": "editor"},
    )
