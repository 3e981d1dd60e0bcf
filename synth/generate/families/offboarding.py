"""A cross-service family over CRM, tickets and the shared drive: offboard a customer who has left — the CRM
account marked churned, their unresolved tickets tagged, the files of their drive folder moved to the archive —
and leave the other customers, and the customer's already solved tickets, as they are."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CROSS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    possessive,
)
from coworkenv.synth.generate.families.kit.files_common import Drive, csv_text, drive
from coworkenv.synth.generate.families.kit.names import Company, slug
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES

UNRESOLVED = ["new", "open", "pending", "hold"]
TAG = "offboarding"


def _folder(b: TaskBuilder, d: Drive, cast: Cast, c: Company, n: int) -> list[str]:
    """``c``'s folder under Customers and ``n`` files in it; their ids."""
    fid = "fld_" + slug(c.name)
    b.add("files", "folders", {"id": fid, "name": c.name, "parent_id": "fld_customers", "created_at": b.ago(days=200)})
    d.folders[c.name] = fid
    rows = [[p.name, c.email(p)] for p in c.contacts]
    docs = [
        (f"{c.name} contacts.csv", csv_text(["name", "email"], rows)),
        (f"{c.name} onboarding notes.md", f"# {c.name} onboarding\n\nKickoff done; SSO configured.\n"),
        (f"{c.name} QBR notes.md", f"# {c.name} quarterly review\n\nUsage up; renewal discussed.\n"),
    ]
    owner = cast.owner[c.key]
    return [d.file(name, text, owner, c.name, b.rng.randint(20, 150))["id"] for name, text in docs[:n]]


@register_family
class OffboardCustomer(Family):
    name = "offboard-customer"
    scenario = "offboarding a churned customer across CRM, tickets and files"
    capabilities = (CROSS, MULTISTEP, DISTRACTORS)
    service_options = (("crm", "tickets", "files"),)
    distractors = "the customer's solved tickets; other customers' tickets, accounts and folders"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        x = cast.company(contacts=2)
        y = cast.company(contacts=1)
        for _ in range(b.n_distractors() // 2):
            cast.company()
        cast.crm()
        cast.tickets()
        issues = b.rng.sample(ISSUES, b.targets + 6)
        open_ = [ticket(b, cast, x, b.ago(days=b.rng.randint(1, 20)), b.rng.choice(UNRESOLVED), "normal", issues.pop())
                 for _ in range(b.targets)]  # fmt: skip
        t_decoys = [
            ticket(b, cast, x, b.ago(days=40), "solved", "normal", issues.pop())["id"],
            ticket(b, cast, y, b.ago(days=3), "open", "high", issues.pop())["id"],
        ]
        filler_tickets(b, cast, b.n_filler())
        d = drive(b, list(cast.staff))
        files = _folder(b, d, cast, x, 2 if b.difficulty == "easy" else 3)
        f_decoys = _folder(b, d, cast, y, 2)
        d.filler(6 + 2 * b.n_filler())
        b.distract(*t_decoys, *f_decoys, cast.acc(y))
        self._reference(b, cast, x, open_, files)
        self._checks(b, cast, x, open_, files, t_decoys, f_decoys)
        _forbidden(b, open_, files)
        b.may_name.append(TAG)
        ask = Ask(
            steps=[
                "mark {company's} account as churned in the CRM",
                "tag each of their unresolved tickets '{tag}'",
                "move everything in their folder on the drive to Archive",
            ],
            context="{company} has left us, so we need to offboard them.",
            avoid="Leave other customers, and {company's} solved tickets, alone",
            topic="offboarding {company}",
        )
        backdrop(b)
        return compose(b, ask, company=x.name, tag=TAG)

    @staticmethod
    def _reference(b: TaskBuilder, cast: Cast, x: Company, open_: list[Json], files: list[str]) -> None:
        b.call("crm", "search_accounts", "acct", query=x.name.split()[0])
        b.call("crm", "update_account", account_id=cast.acc(x), status="churned")
        b.call("tickets", "search_tickets", organization_id=cast.org(x), status=UNRESOLVED)
        for t in open_:
            b.call("tickets", "update_ticket", ticket_id=t["id"], add_tags=[TAG])
        b.call("files", "list_files", folder_id="fld_" + slug(x.name))
        for f in files:
            b.call("files", "move_file", file_id=f, folder_id="fld_archive")
        b.say(f"{x.name} is offboarded: account churned, {len(open_)} ticket(s) tagged, {len(files)} file(s) archived.")
        with b.alternative():
            b.call("files", "search_files", query=x.name)
            for f in reversed(files):
                b.call("files", "move_file", file_id=f, folder_id="fld_archive")
            b.call("tickets", "list_organizations", query=x.name.split()[0])
            for t in reversed(open_):
                b.call("tickets", "update_ticket", ticket_id=t["id"], add_tags=[TAG])
            b.call("crm", "update_account", account_id=cast.acc(x), status="churned")
            b.say("Done.")

    @staticmethod
    def _checks(
        b: TaskBuilder, cast: Cast, x: Company, open_: list[Json], files: list[str], t_dec: list[str], f_dec: list[str]
    ) -> None:
        """Churned, tickets tagged, files archived (0.2 each); the tickets guard (0.12) needs the account churned
        and the tickets tagged, the files guard (0.28) needs the files archived and the tickets guard: so skipping
        any part, or touching any distractor, fails."""
        b.check(
            "churned",
            0.2,
            f"{possessive(x.name)} CRM account is churned.",
            {"kind": "record_fields", "service": "crm", "table": "accounts", "id": cast.acc(x),
             "fields": {"status": "churned"}},
        )  # fmt: skip
        for i, t in enumerate(open_):
            b.check(
                f"tagged_{i + 1}",
                0.2 / len(open_),
                f"'{t['subject']}' is tagged '{TAG}'.",
                {"kind": "record_fields", "service": "tickets", "table": "tickets", "id": t["id"],
                 "fields": {"tags": {"contains": TAG}}},
            )  # fmt: skip
        for i, f in enumerate(files):
            b.check(
                f"archived_{i + 1}",
                0.2 / len(files),
                "The customer's file is in Archive.",
                {"kind": "record_fields", "service": "files", "table": "files", "id": f,
                 "fields": {"folder_id": "fld_archive", "trashed": False}},
            )  # fmt: skip
        tagged = tuple(f"tagged_{i + 1}" for i in range(len(open_)))
        archived = tuple(f"archived_{i + 1}" for i in range(len(files)))
        b.check(
            "tickets_guard",
            0.12,
            "The customer's solved tickets and other customers' tickets are as they were.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": t_dec},
            ("churned", *tagged),
        )
        b.check(
            "files_guard",
            0.28,
            "Other customers' files are as they were.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": f_dec},
            ("churned", "tickets_guard", *archived),
        )


def _forbidden(b: TaskBuilder, open_: list[Json], files: list[str]) -> None:
    b.forbid_call(
        "trashed_files",
        "Moving the customer's files to the trash instead of the archive.",
        "files",
        "delete_file",
        {},
        {"file_id": files[0]},
    )
    b.forbid_call(
        "closed_tickets",
        "Closing the customer's unresolved tickets instead of tagging them.",
        "tickets",
        "update_ticket",
        {"status": {"in": ["solved", "closed"]}},
        {"ticket_id": open_[0]["id"], "status": "closed"},
    )
