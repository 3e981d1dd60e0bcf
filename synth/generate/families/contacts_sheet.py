"""A cross-service family on the CRM and the shared drive: bring a customer's contact sheet in line with the
CRM — a changed address, a new contact, a contact who left — without touching other customers' sheets."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, MULTISTEP, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.names import Company, Person
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast

HEADER = ["name", "email", "title"]


def _rows(c: Company, people: list[Person], old: dict[str, str] | None = None) -> list[list[str]]:
    return [[p.name, (old or {}).get(p.name, c.email(p)), p.title or "Contact"] for p in people]


@register_family
class ContactsSheetSync(Family):
    name = "contacts-sheet-sync"
    scenario = "updating a customer's contact sheet from the CRM"
    capabilities = (CROSS, MULTISTEP, DISTRACTORS)
    service_options = (("crm", "files"),)
    distractors = "other customers' contact sheets; the address the contact used before; the contact who left"

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        x = cast.company(contacts=2 + b.targets)
        others = [cast.company(contacts=2) for _ in range(1 + b.n_distractors() // 2)]
        cast.crm()
        d = drive(b, list(cast.staff))
        gone = b.names.person()
        moved = x.contacts[0]
        new = x.contacts[-1]
        old_email = moved.address(x.domain, (x.email_style + 1) % 4)
        kept = _rows(x, [p for p in x.contacts if p is not new], {moved.name: old_email})
        stale = [*kept, [gone.name, x.email(gone), "Contact"]]
        sheet = d.file(f"{x.name} contacts.csv", csv_text(HEADER, stale), cast.owner[x.key], "Customers", 120)
        decoys = [
            d.file(f"{c.name} contacts.csv", csv_text(HEADER, _rows(c, c.contacts)), cast.owner[c.key], "Customers", 60)
            for c in others
        ]
        decoys_ids = [f["id"] for f in decoys]
        d.filler(6 + 2 * b.n_filler())
        b.distract(*decoys_ids)
        fresh = csv_text(HEADER, _rows(x, x.contacts))
        b.call("crm", "search_accounts", "acct", query=x.name.split()[0])
        b.call("crm", "get_account", account_id=cast.acc(x))
        b.call("files", "search_files", query=f"{x.name} contacts")
        b.call("files", "read_csv", file_id=sheet["id"])
        b.call("files", "write_file", file_id=sheet["id"], content=fresh, base_version=1)
        b.say(f"The {x.name} sheet now matches the CRM: {len(x.contacts)} contacts.")
        with b.alternative():
            b.call("crm", "search_contacts", account_id=cast.acc(x))
            b.call("files", "list_files", folder_id="fld_customers")
            b.call("files", "write_file", file_id=sheet["id"], content=csv_text(HEADER, _rows(x, x.contacts[::-1])))
            b.say("Updated.")
        self._checks(b, sheet["id"], x, gone, old_email, decoys_ids)
        _forbidden(b, sheet["id"])
        ask = Ask(
            steps=["bring the {company} contact sheet on the drive in line with the CRM, one row per contact there"],
            context="Our {company} contact sheet is out of date.",
            avoid="Keep its columns, and leave the other customers' sheets alone",
            topic="the {company} contact sheet",
        )
        backdrop(b)
        return compose(b, ask, company=x.name)

    @staticmethod
    def _checks(b: TaskBuilder, sheet: str, x: Company, gone: Person, old_email: str, decoys: list[str]) -> None:
        """Every CRM contact's current address in the sheet (0.45), neither the one who left nor the old address
        (0.25), the other sheets as they were (0.3)."""
        every = "^name,email,title\n" + "".join(f"(?=[\\s\\S]*{rx(x.email(p))})" for p in x.contacts)
        b.check(
            "sheet_matches_crm",
            0.45,
            "The sheet has every CRM contact with their current address.",
            {"kind": "record_fields", "service": "files", "table": "files", "id": sheet,
             "fields": {"content": {"regex": every, "case_insensitive": True}, "trashed": False}},
        )  # fmt: skip
        b.check(
            "stale_rows_gone",
            0.25,
            f"{gone.name}, who left, and the old address are gone.",
            {"kind": "record_fields", "service": "files", "table": "files", "id": sheet,
             "fields": {"content": {"regex": f"^(?![\\s\\S]*{rx(gone.name)})(?![\\s\\S]*{rx(old_email)})"}}},
            ("sheet_matches_crm",),
        )  # fmt: skip
        b.check(
            "other_sheets_untouched",
            0.3,
            "The other customers' sheets are as they were.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": decoys},
            ("sheet_matches_crm",),
        )


def _forbidden(b: TaskBuilder, sheet: str) -> None:
    b.forbid_call(
        "trashed_sheet",
        "Moving a contact sheet to the trash instead of updating it.",
        "files",
        "delete_file",
        {},
        {"file_id": sheet},
    )
