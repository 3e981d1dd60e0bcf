"""A cross-service family on tickets and the shared drive: write the list of enterprise customers' unresolved
urgent tickets into a new CSV in the Support folder, for the weekly review (and nothing that only looks like
one of them)."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, REPORT, Family, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_tickets, ticket
from coworkenv.synth.generate.families.kit.texts import ISSUES

UNRESOLVED = ["new", "open", "pending", "hold"]
HEADER = ["ticket_id", "subject", "organization"]


def _has(ids: list[str]) -> str:
    return "".join(f"(?=[\\s\\S]*{rx(i)}\\b)" for i in ids)


@register_family
class UrgentTicketsToSheet(Family):
    name = "urgent-tickets-to-sheet"
    scenario = "exporting the urgent enterprise tickets into a CSV on the drive"
    capabilities = (CROSS, DISTRACTORS, REPORT)
    service_options = (("tickets", "files"),)
    distractors = (
        "urgent tickets of business and starter customers; enterprise tickets that are solved or only high; last "
        "week's sheet"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        ent = [cast.company("enterprise") for _ in range(2)]
        small = [cast.company(b.pick("business", "starter")) for _ in range(2)]
        cast.tickets(tag_tiers=True)
        issues = b.rng.sample(ISSUES, b.targets + 8)
        targets = [
            ticket(
                b, cast, ent[i % 2], b.ago(hours=b.rng.randint(2, 90)), b.rng.choice(UNRESOLVED), "urgent", issues.pop()
            )
            for i in range(b.targets + 1)
        ]
        decoys = [
            ticket(b, cast, b.rng.choice(small), b.ago(hours=5), "open", "urgent", issues.pop()),
            ticket(b, cast, b.rng.choice(ent), b.ago(days=4), "solved", "urgent", issues.pop()),
            ticket(b, cast, b.rng.choice(ent), b.ago(hours=8), "open", "high", issues.pop()),
        ]
        if b.hard:
            decoys.append(ticket(b, cast, b.rng.choice(small), b.ago(hours=30), "pending", "urgent", issues.pop()))
            decoys.append(ticket(b, cast, b.rng.choice(ent), b.ago(days=9), "closed", "urgent", issues.pop()))
        filler_tickets(b, cast, b.n_filler())
        d = drive(b)
        rows = [[t["id"], t["subject"], c.name] for t, c in zip(decoys[:1], small, strict=False)]
        last = d.file("urgent-last-week.csv", csv_text(HEADER, rows), d.staff[0], "Support", 7)
        d.filler(6 + 2 * b.n_filler())
        b.distract(*(t["id"] for t in decoys), last["id"])
        name = f"urgent-{b.now_iso[:10]}.csv"
        names = {cast.org(c): c.name for c in cast.companies}
        self._reference(b, targets, names, name)
        self._checks(b, targets, decoys, name, last["id"])
        _forbidden(b, targets)
        b.may_name.append(name)
        ask = Ask(
            steps=[
                "put every unresolved urgent ticket of our enterprise customers into a new CSV called {name} in the "
                "Support folder, with the columns ticket_id, subject and organization",
            ],
            context="I need this week's urgent enterprise tickets for the review.",
            avoid="Only those tickets; don't change any ticket",
            topic="the urgent tickets sheet",
        )
        backdrop(b)
        return compose(b, ask, name=name)

    @staticmethod
    def _reference(b: TaskBuilder, targets: list[Json], names: dict[str, str], name: str) -> None:
        rows = [[t["id"], t["subject"], names[t["organization_id"]]] for t in targets]
        b.call("tickets", "list_organizations")
        b.call("tickets", "search_tickets", status=UNRESOLVED, priority=["urgent"])
        b.call("files", "list_files")
        b.call("files", "create_file", name=name, content=csv_text(HEADER, rows), folder_id="fld_support")
        b.say(f"Created {name} in Support with {len(rows)} ticket(s).")
        with b.alternative():
            b.call("tickets", "search_tickets", priority=["urgent"])
            b.call("files", "create_file", "sheet", name=name, content=csv_text(HEADER, []), folder_id="fld_support")
            b.call(
                "files",
                "append_to_file",
                file_id={"$ref": "sheet.id"},
                text=csv_text(HEADER, rows[::-1]).split("\n", 1)[1],
            )
            b.say("The sheet is ready.")

    @staticmethod
    def _checks(b: TaskBuilder, targets: list[Json], decoys: list[Json], name: str, last: str) -> None:
        """The sheet in Support with every target (0.45) and none of the look-alikes (0.25); the tickets as they
        were (0.3)."""
        where = {"name": name, "folder_id": "fld_support", "trashed": False}
        b.check(
            "sheet_lists_targets",
            0.45,
            f"{name} in Support lists every unresolved urgent enterprise ticket.",
            {"kind": "record_exists", "service": "files", "table": "files",
             "where": where | {"content": {"regex": "^(?=[\\s\\S]*ticket_id)" + _has([t["id"] for t in targets])}}},
        )  # fmt: skip
        absent = "".join(f"(?![\\s\\S]*{rx(d['id'])}\\b)" for d in decoys)
        b.check(
            "sheet_only_targets",
            0.25,
            "The sheet lists none of the tickets that only look like them.",
            {"kind": "record_exists", "service": "files", "table": "files",
             "where": where | {"content": {"regex": "^" + absent}}},
            ("sheet_lists_targets",),
        )  # fmt: skip
        b.check(
            "tickets_untouched",
            0.3,
            "No ticket is changed.",
            {"kind": "records_unchanged", "service": "tickets", "table": "tickets",
             "ids": [t["id"] for t in [*targets, *decoys]]},
            ("sheet_lists_targets",),
        )  # fmt: skip
        b.distract(last)


def _forbidden(b: TaskBuilder, targets: list[Json]) -> None:
    b.forbid_call(
        "changed_ticket",
        "Changing a ticket, when only a list of them was asked for.",
        "tickets",
        "update_ticket",
        {},
        {"ticket_id": targets[0]["id"], "status": "solved"},
    )
