"""A multi-turn family on the shared drive and chat: the agent totals one team's spending in a category from
the month's expense sheet (a CSV) and tells the user; the user then corrects the sheet itself (fixes an amount,
or on hard adds a missing receipt) and asks for the corrected total to be posted in the team's channel."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CLARIFY, COMMS, CROSS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.files_common import csv_text, drive
from coworkenv.synth.generate.families.kit.multiturn import FINISHED, PERSONA, TEAMS, Workspace, seed_chat, workspace
from coworkenv.synth.generate.families.kit.names import USER, slug
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family

CATEGORIES = ("software", "travel", "hardware", "training", "catering", "contractors")
SUPPLIERS = (
    "Northwind Air", "CloudDesk", "PaperTrail", "Metro Rail", "Bright Catering", "DevTools Inc", "HotelOne",
    "Keyboard Co", "LearnHub", "Freelance Pool", "Atlas Cabs", "SecureVault",
)  # fmt: skip
HEADER = ["date", "team", "category", "supplier", "amount_usd"]


def cents_rx(cents: int) -> str:
    """A regex for an amount with cents however it is grouped: '$1,234.50', '1234.50'."""
    body = f"{cents // 100:,}".replace(",", ",?")
    return rf"(?<![\d,.]){body}\.{cents % 100:02d}(?!\d)"


def _usd(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


@dataclass(frozen=True)
class _Report:
    team: str
    category: str
    month: str
    channel: str
    chan_id: str
    sheet: Json
    old: int
    new: int
    edit: Json


@register_family
class CsvReportToChat(Family):
    name = "csv-report-to-chat"
    scenario = "a total computed from a spreadsheet, corrected by the user, posted in chat"
    capabilities = (CROSS, MULTISTEP, CLARIFY, COMMS)
    service_options = (("files", "chat"),)
    distractors = (
        "the same team's other categories and other teams' rows of the same category; last month's sheet; "
        "the team budget file"
    )

    def build(self, b: TaskBuilder) -> str:
        r = self._seed(b)
        self._user_turn(b, r)
        self._reference(b, r)
        self._checks(b, r)
        b.may_name += [r.team, r.channel, r.category]
        ask = Ask(
            steps=["total what the {team} team spent on {category} in {month} from the expense sheet on the drive"],
            context="I need the {team} team's {category} spend for {month}.",
            report="tell me the total first; it goes to #{channel} once I've checked it",
            topic="{team} {category} spend",
        )
        backdrop(b)
        return compose(b, ask, team=r.team, category=r.category, month=r.month, channel=r.channel)

    @staticmethod
    def _rows(b: TaskBuilder, team: str, category: str, month_start: str, n: int) -> tuple[list[list[str]], int]:
        """The sheet's rows: ``n`` of the team and category, and rows of other teams and categories; the total."""
        day = month_start[:8]
        others = [t for t in TEAMS if t != team]
        rows, total = [], 0
        for _ in range(n):
            cents = b.rng.randrange(4_000, 250_000)
            total += cents
            rows.append([f"{day}{b.rng.randint(1, 28):02d}", team, category, b.rng.choice(SUPPLIERS), _usd(cents)])
        for k in range(4 + b.n_distractors() + b.n_filler()):
            t = team if k % 3 == 0 else b.rng.choice(others)
            c = b.rng.choice([x for x in CATEGORIES if x != category]) if k % 3 == 0 else category
            if k % 3 == 2:
                c = b.rng.choice(CATEGORIES)
            row = [
                f"{day}{b.rng.randint(1, 28):02d}",
                t,
                c,
                b.rng.choice(SUPPLIERS),
                _usd(b.rng.randrange(4_000, 250_000)),
            ]
            rows.append(row)
        b.rng.shuffle(rows)
        rows.sort(key=lambda r: r[0])
        return rows, total

    @staticmethod
    def _seed(b: TaskBuilder) -> _Report:
        ws = workspace(b, b.rng.randint(1, 3))
        d = drive(b, list(ws.staff))
        team, category = b.rng.choice(TEAMS), b.rng.choice(CATEGORIES)
        chan_ids = seed_chat(b, ws, [team, "finance", "general"])
        start, _, month = b.month(1)
        rows, old = CsvReportToChat._rows(b, team, category, start, 1 + b.targets)
        name = f"expenses-{month.lower().replace(' ', '-')}.csv"
        sheet = d.file(name, csv_text(HEADER, rows), ws.staff[1], "Finance", 2)
        prev_start, _, prev = b.month(2)
        prev_rows, _ = CsvReportToChat._rows(b, team, category, prev_start, 2)
        last = d.file(
            f"expenses-{prev.lower().replace(' ', '-')}.csv", csv_text(HEADER, prev_rows), ws.staff[1], "Finance", 33
        )
        budget = d.file(
            f"{team} budget.md", f"# {team} budget\n\n{category}: {_usd(old * 2)} a month\n", USER, "Team", 60
        )
        b.distract(last["id"], budget["id"])
        if b.difficulty != "easy":
            draft_rows, _ = CsvReportToChat._rows(b, team, category, start, 1 + b.targets)
            draft = d.file(f"expenses-{slug(month)}-draft.csv", csv_text(HEADER, draft_rows), ws.staff[1], "Archive", 9)
            b.distract(draft["id"])
        d.filler(6 + 2 * b.n_filler())
        edit, new = CsvReportToChat._edit(b, sheet, rows, team, category, start)
        return _Report(team, category, month, team, chan_ids[team], sheet, old, new, edit)

    @staticmethod
    def _edit(
        b: TaskBuilder, sheet: Json, rows: list[list[str]], team: str, category: str, start: str
    ) -> tuple[Json, int]:
        """What the user changes in the sheet: (hard) a missing receipt appended; else one amount corrected."""
        targets = [r for r in rows if r[1] == team and r[2] == category]
        old = sum(int(r[4].replace(".", "")) for r in targets)
        if b.hard:
            cents = b.rng.randrange(4_000, 90_000)
            line = f"{start[:8]}{b.rng.randint(1, 28):02d},{team},{category},{b.rng.choice(SUPPLIERS)},{_usd(cents)}\n"
            step = {"service": "files", "tool": "append_to_file", "arguments": {"file_id": sheet["id"], "text": line}}
            return step, old + cents
        row = b.rng.choice(targets)
        was = int(row[4].replace(".", ""))
        now = was + b.pick(-1, 1) * b.rng.randrange(1_000, was // 2)
        fixed = [r if r is not row else [*r[:4], _usd(now)] for r in rows]
        content = csv_text(HEADER, fixed)
        step = {"service": "files", "tool": "write_file", "arguments": {"file_id": sheet["id"], "content": content}}
        return step, old - was + now

    @staticmethod
    def _user_turn(b: TaskBuilder, r: _Report) -> None:
        what = "added a receipt that was missing" if b.hard else "fixed an amount that was entered wrong"
        message = (
            f"Thanks. I just {what} in the expense sheet myself. Please work out the corrected total and post it "
            f"in #{r.channel}."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": [r.edit]}]}

    @staticmethod
    def _reference(b: TaskBuilder, r: _Report) -> None:
        fid = r.sheet["id"]
        b.call("files", "search_files", "found", query="expenses", mime_type="text/csv")
        b.call("files", "read_csv", file_id=fid)
        b.say(f"The {r.team} team spent ${_usd(r.old)} on {r.category} in {r.month}.")
        b.call("files", "read_csv", file_id=fid)
        post = f"{r.team} {r.category} spend for {r.month}: ${_usd(r.new)} (corrected sheet)."
        b.call("chat", "post_message", channel=f"#{r.channel}", text=post)
        b.say(f"With your change the total is ${_usd(r.new)}; posted in #{r.channel}.")
        with b.alternative():
            b.call("files", "list_files", folder_id="fld_finance")
            b.call("files", "read_file", file_id=fid)
            b.say(f"Total: ${_usd(r.old)}.")
            b.call("files", "read_file", file_id=fid)
            b.call(
                "chat",
                "post_message",
                channel=r.chan_id,
                text=f"Corrected {r.month} {r.category} total: ${_usd(r.new)}",
            )
            b.say(f"Posted the corrected total, ${_usd(r.new)}.")

    @staticmethod
    def _checks(b: TaskBuilder, r: _Report) -> None:
        """The corrected total posted (0.4) and said (0.3: an agent that only says 'Done.' fails); the other files
        as they were (0.3)."""
        b.check(
            "posted_new_total",
            0.4,
            f"The corrected total is posted in #{r.channel}.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {"channel_id": r.chan_id, "user_id": Workspace.chat_id(USER),
                       "text": {"regex": cents_rx(r.new)}}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "says_new_total",
            0.3,
            "The agent tells the user the corrected total.",
            {"kind": "said_value", "value": r.new, "cents": True},
            ("posted_new_total",),
        )
        b.check(
            "other_files_untouched",
            0.3,
            "Last month's sheet and the team budget are unchanged.",
            {"kind": "records_unchanged", "service": "files", "table": "files", "ids": list(b.distractors)},
            ("posted_new_total",),
        )
        b.forbid(
            "posted_old_total",
            "Posting the total from before the user's correction.",
            {"kind": "tool_called", "service": "chat", "tool": "post_message", "outcome": "any",
             "arguments": {"text": {"regex": cents_rx(r.old)}}},
            {"service": "chat", "tool": "post_message",
             "arguments": {"channel": f"#{r.channel}", "text": f"{r.team} {r.category}: ${_usd(r.old)}"}},
        )  # fmt: skip
