"""A resource family on the shared drive and docs: summarise a sheet (one of the user's own CSV files with
``--from``, else a stand-in expense sheet) into a report document — the total of an amount column per value of a
group column, and the overall total — leaving the sheet as it is."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import MULTISTEP, REPORT, Json, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.files_common import csv_text
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.resources_common import ResourceFamily, grounding, place
from coworkenv.synth.generate.families.kit.resources_facts import Summary, amount_rx, shown, summaries
from coworkenv.synth.generate.resources.loader import key_of
from coworkenv.synth.generate.resources.model import ResourceSet, Sheet

TEAMS = ("Support", "Sales", "Finance", "Engineering", "Marketing", "People")
CATEGORIES = ("travel", "software", "hardware", "training", "catering", "office")


@register_family
class SheetSummaryReport(ResourceFamily):
    name = "sheet-summary-report"
    scenario = "summarising a spreadsheet into a report document"
    capabilities = (REPORT, MULTISTEP)
    service_options = (("files", "docs"),)
    distractors = "the user's other sheets and documents; the sheet itself must stay as it is"

    @classmethod
    def fits(cls, rs: ResourceSet) -> bool:
        return any(summaries(s) for s in rs.sheets)

    def stand_in(self, b: TaskBuilder) -> ResourceSet:
        """This month's expense sheet and earlier months' (one; two at medium and hard), alike in shape."""
        months = 2 if b.difficulty == "easy" else 3
        return ResourceSet("stand-in", sheets=tuple(self._spend(b, back) for back in range(1, months + 1)))

    @staticmethod
    def _spend(b: TaskBuilder, back: int) -> Sheet:
        groups = b.rng.sample(CATEGORIES if b.rng.random() < 0.5 else TEAMS, 2 + b.targets)
        column = "category" if groups[0] in CATEGORIES else "team"
        _, _, month = b.month(back)
        rows = [
            [f"2026-{b.rng.randint(1, 12):02d}-{b.rng.randint(1, 28):02d}", b.rng.choice(groups),
             f"{b.rng.randrange(2_000, 300_000) / 100:.2f}"]
            for _ in range(4 + 3 * b.targets)
        ]  # fmt: skip
        for g in groups:  # every group has a row
            rows.append([rows[0][0], g, f"{b.rng.randrange(2_000, 90_000) / 100:.2f}"])
        header = ["date", column, "amount"]
        name = f"spend-{month.lower().replace(' ', '-')}.csv"
        text = csv_text(header, rows)
        return Sheet(key_of(name), name, name, text, tuple(header), tuple(map(tuple, rows)))

    def build(self, b: TaskBuilder) -> str:
        rs, _ = grounding(self, b)
        options = [s for sheet in rs.sheets for s in summaries(sheet)]
        summary = options[b.rng.randrange(len(options))]
        placed = place(b, rs, summary.sheet.id)
        sheet_id = placed.sheets[summary.sheet.id]
        b.distract(*(rid for sid, rid in placed.sheets.items() if sid != summary.sheet.id))
        sheet = next(r for r in b.rows("files", "files") if r["id"] == sheet_id)
        if placed.drive is not None:
            placed.drive.filler(3 + b.n_filler())
        stem = sheet["name"].rsplit(".", 1)[0].replace(" - ", " ")
        title = f"Summary of {stem}"
        self._reference(b, summary, sheet_id, title)
        self._checks(b, summary, sheet_id, title)
        b.may_name += [sheet["name"], summary.sheet.name.rsplit(".", 1)[0][:40], title, summary.group, summary.amount]
        ask = Ask(
            steps=[
                "read {sheet} on the drive",
                "write a short report doc titled '{title}' with the total {amount} for each {group} and the "
                "overall total",
            ],
            context="I need the numbers in {sheet} in a form I can share.",
            avoid="Leave the sheet itself as it is.",
            topic="the {group} summary",
        )
        backdrop(b)
        return compose(b, ask, sheet=sheet["name"], title=title, amount=summary.amount, group=summary.group)

    @staticmethod
    def _content(s: Summary, title: str) -> str:
        lines = [f"# {title}", "", f"Total {s.amount} by {s.group}:", ""]
        lines += [f"- {name}: {shown(total)}" for name, total in s.totals]
        return "\n".join([*lines, "", f"Overall total: {shown(s.total)}", ""])

    def _reference(self, b: TaskBuilder, s: Summary, sheet_id: str, title: str) -> None:
        b.call("files", "search_files", "found", query=s.sheet.name.rsplit(".", 1)[0][:40])
        b.call("files", "read_csv", file_id=sheet_id, limit=500)
        b.call("docs", "create_document", title=title, content=self._content(s, title))
        with b.alternative():
            b.call("files", "read_file", file_id=sheet_id)
            table = ["| " + s.group + " | " + s.amount + " |", "|---|---|"]
            table += [f"| {n} | {t:.2f} |" for n, t in s.totals]
            content = "\n".join([f"{title}", "", *table, "", f"Total: {s.total:.2f}", ""])
            b.call("docs", "create_document", title=title, content=content)

    @staticmethod
    def _checks(b: TaskBuilder, s: Summary, sheet_id: str, title: str) -> None:
        """The report made (0.2), each group's total on its line (0.5), the overall total (0.15), the sheet as it
        was (0.15)."""
        made: Json = {
            "title": {"regex": rf"^\s*{rx(title)}\s*$", "case_insensitive": True},
            "created_at": {"gte": b.now_iso},
        }
        b.check(
            "report_made",
            0.2,
            f"A document titled '{title}' is created.",
            {"kind": "record_exists", "service": "docs", "table": "documents", "where": made},
        )
        shares = 0.5 / len(s.totals)
        for i, (name, total) in enumerate(s.totals):
            line = rf"{rx(name)}[^\n]{{0,120}}{amount_rx(total)}"
            b.check(
                f"group_{i + 1}",
                shares,
                f"The report gives {name}'s total {s.amount}: {shown(total)}.",
                {"kind": "record_exists", "service": "docs", "table": "documents",
                 "where": {**made, "content": {"regex": line, "case_insensitive": True}}},
                ("report_made",),
            )  # fmt: skip
        b.check(
            "overall_total",
            0.15,
            f"The report gives the overall total: {shown(s.total)}.",
            {"kind": "record_exists", "service": "docs", "table": "documents",
             "where": {**made, "content": {"regex": amount_rx(s.total)}}},
            ("report_made",),
        )  # fmt: skip
        b.check(
            "sheet_untouched",
            0.15,
            "The sheet is as it was.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": [sheet_id]},
            ("report_made",),
        )
        b.forbid_call(
            "sheet_overwritten",
            "Overwriting the sheet that was to be summarised.",
            "files",
            "write_file",
            {"file_id": sheet_id},
            {"file_id": sheet_id, "content": f"{s.group},{s.amount}\n"},
        )
