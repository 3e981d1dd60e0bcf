"""What the warehouse families share: the members of a task's warehouse, data tables written from rows, a daily
sales table (orders and revenue by day, region and channel) with its totals, a test copy of it that looks like the
real one, background tables, saved queries and dashboards, and how amounts are matched in written text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import ACCOUNT_MANAGERS, FINANCE, USER, Person, Staff

REGIONS = ("EMEA", "AMER", "APAC", "LATAM")
CHANNELS = ("web", "partner", "marketplace")
ANALYST = Staff(Person("Omar", "Haddad"), "Data Analyst", "mem_omar")
SALES_COLUMNS = (
    ("day", "date", "The order day, e.g. '2026-03-01'"),
    ("region", "text", "EMEA, AMER, APAC or LATAM"),
    ("channel", "text", "web, partner or marketplace"),
    ("orders", "integer", "Orders placed that day"),
    ("revenue", "number", "Revenue in US dollars"),
)
BACKGROUND = (
    ("marketing_spend", "Ad spend per day and campaign.",
     (("day", "date", "The day"), ("campaign", "text", "The campaign"), ("spend", "number", "US dollars"))),
    ("web_sessions", "Website sessions per day and source.",
     (("day", "date", "The day"), ("source", "text", "organic, paid or referral"), ("sessions", "integer", "Sessions"))),
    ("support_daily", "Support tickets opened per day and queue.",
     (("day", "date", "The day"), ("queue", "text", "billing, tech or account"), ("opened", "integer", "Tickets"))),
)  # fmt: skip


def usd(cents: int) -> str:
    """123456 → '$1,234.56'."""
    return f"${cents // 100:,}.{cents % 100:02d}"


def amount_rx(cents: int) -> str:
    """A regex for an amount in dollars and cents however it is grouped: '$1,234.56', '1234.56', 'USD 1,234.56'."""
    body = f"{cents // 100:,}".replace(",", ",?")
    return rf"(?<![\d,.]){body}\.{cents % 100:02d}(?!\d)"


def day(b: TaskBuilder, back: int) -> str:
    """The date ``back`` days before the task's day, as the warehouse writes it ('2026-03-01')."""
    return (b.now - timedelta(days=back)).date().isoformat()


@dataclass
class Warehouse:
    """One task's warehouse: its members, and a counter of rows per table."""

    b: TaskBuilder
    staff: list[Staff]
    counts: dict[str, int] = field(default_factory=dict)

    def table(self, name: str, description: str, columns: Sequence[tuple[Any, ...]], owner: str = "Data") -> None:
        cols = [
            {"name": c[0], "type": c[1], "description": c[2], "personal": bool(c[3]) if len(c) > 3 else False}
            for c in columns
        ]
        self.b.add("warehouse", "tables", {"id": name, "description": description, "columns": cols, "owner": owner})

    def insert(self, table: str, rows: Sequence[Json]) -> None:
        for values in rows:
            n = self.counts[table] = self.counts.get(table, 0) + 1
            self.b.add("warehouse", "rows", {"id": f"row_{table}_{n:05d}", "table_id": table, "values": values})

    def saved(self, name: str, sql: str, owner: Staff, days: float, description: str = "") -> Json:
        record = {
            "id": self.b.uid("sq_"), "name": name, "sql": sql, "description": description, "owner": owner.email,
            "created_at": self.b.ago(days=days), "updated_at": self.b.ago(days=days),
        }  # fmt: skip
        return self.b.add("warehouse", "saved_queries", record)

    def dashboard(self, name: str, owner: Staff, description: str = "") -> Json:
        record = {
            "id": self.b.uid("dash_", name), "name": name, "description": description, "owner": owner.email,
            "created_at": self.b.ago(days=self.b.rng.randint(30, 200)),
        }  # fmt: skip
        return self.b.add("warehouse", "dashboards", record)

    def tile(self, board: Json, title: str, sql: str, visualization: str, position: int) -> Json:
        when = self.b.ago(days=self.b.rng.randint(5, 60))
        record = {
            "id": self.b.uid("tile_"), "dashboard_id": board["id"], "title": title, "sql": sql,
            "visualization": visualization, "position": position, "created_at": when, "updated_at": when,
        }  # fmt: skip
        return self.b.add("warehouse", "tiles", record)

    def decoys(self, table: str = "orders_staging") -> list[str]:
        """The level's number of colleagues' outdated saved queries over ``table`` (distractors, never the answer)."""
        ids = []
        for k in range(self.b.n_distractors()):
            owner = self.b.rng.choice(self.staff[1:] or self.staff)
            sql = f"SELECT region, SUM(revenue) FROM {table} GROUP BY region"
            ids.append(self.saved(f"Revenue by region (draft {k + 1})", sql, owner, 30 + 7 * k,
                                  "Draft over the staging copy; superseded.")["id"])  # fmt: skip
        self.b.distract(*ids)
        return ids

    def background(self, n: int) -> None:
        """Background tables with a few weeks of rows, and saved queries over them (never a task's target)."""
        rng = self.b.rng
        for name, description, columns in rng.sample(BACKGROUND, min(len(BACKGROUND), 1 + n // 4)):
            self.table(name, description, columns)
            labels = {"campaign": ("spring-promo", "brand", "retargeting"), "source": ("organic", "paid", "referral"),
                      "queue": ("billing", "tech", "account")}  # fmt: skip
            key, kind = columns[1][0], columns[2][1]
            rows = [
                {"day": day(self.b, k), key: label,
                 columns[2][0]: rng.randrange(100, 900) if kind == "integer" else rng.randrange(5_000, 90_000) / 100}
                for k in range(1, 8 + n) for label in labels[key]
            ]  # fmt: skip
            self.insert(name, rows)
            measure = f"SUM({columns[2][0]})"
            self.saved(f"{name.replace('_', ' ').capitalize()} by {key}", f"SELECT {key}, {measure} FROM {name} "
                       f"GROUP BY {key}", rng.choice(self.staff), rng.randint(10, 90))  # fmt: skip


def warehouse(b: TaskBuilder, staff: list[Staff] | None = None) -> Warehouse:
    """The members (the user first, the primary one)."""
    people = staff or [USER, FINANCE, *ACCOUNT_MANAGERS, ANALYST]
    for s in people:
        member = {"id": "mem_" + s.key.split("_", 1)[-1], "email": s.email, "name": s.name, "title": s.title,
                  "is_primary": s is USER}  # fmt: skip
        b.add("warehouse", "members", member)
    return Warehouse(b, people)


@dataclass
class Sales:
    """A daily sales table: its rows (revenue in cents here) and the days it covers, oldest first."""

    table: str
    days: list[str]
    rows: list[Json]

    def total(self, metric: str, days: Sequence[str] | None = None, **where: str) -> int:
        """The sum of ``metric`` ('orders', or 'revenue' in cents) over the rows of these days matching ``where``."""
        chosen = set(days or self.days)
        return sum(int(r[metric]) for r in self.rows if r["day"] in chosen and all(r[k] == v for k, v in where.items()))


def sales(
    b: TaskBuilder,
    w: Warehouse,
    n_days: int,
    table: str = "orders",
    regions: Sequence[str] = REGIONS[:3],
    description: str = "Orders and revenue per day, region and channel. The source of truth for sales figures.",
    spike: tuple[str, float] | None = None,
    quiet_weekends: bool = False,
) -> Sales:
    """``n_days`` days (up to yesterday) of orders and revenue per region and channel; ``spike``: (a day, a factor)
    that multiplies that day's figures; ``quiet_weekends``: a third fewer orders on Saturdays and Sundays."""
    days = [day(b, k) for k in range(n_days, 0, -1)]
    rows: list[Json] = []
    base = {r: b.rng.randrange(20, 60) for r in regions}
    for d in days:
        factor = spike[1] if spike and spike[0] == d else 1.0
        if quiet_weekends and factor == 1.0 and date.fromisoformat(d).weekday() >= 5:
            factor = 0.66
        for region in regions:
            for channel in CHANNELS:
                orders = max(1, int((base[region] + b.rng.randint(-6, 6)) * factor * (0.5 if channel != "web" else 1)))
                cents = orders * b.rng.randrange(4_000, 9_000) + b.rng.randrange(0, 100)
                rows.append({"day": d, "region": region, "channel": channel, "orders": orders, "revenue": cents})
    w.table(table, description, SALES_COLUMNS)
    w.insert(table, [{**r, "revenue": r["revenue"] / 100} for r in rows])
    return Sales(table, days, rows)


def staging_copy(
    b: TaskBuilder, w: Warehouse, real: Sales, name: str = "orders_staging", odd: str | None = None
) -> Sales:
    """A test copy of a sales table with other numbers: it looks like the real one and must not be reported from.
    ``odd``: a day whose orders the copy multiplies by six (an anomaly of its own)."""
    rows = [
        {**r, "orders": (r["orders"] + b.rng.randint(1, 9)) * (6 if r["day"] == odd else 1),
         "revenue": r["revenue"] + b.rng.randrange(1_000, 50_000)}
        for r in real.rows
    ]  # fmt: skip
    w.table(name, "TEST COPY loaded by the pipeline's dry runs; numbers are synthetic. Do not report from it.",
            SALES_COLUMNS, owner="Data Platform (staging)")  # fmt: skip
    w.insert(name, [{**r, "revenue": r["revenue"] / 100} for r in rows])
    return Sales(name, real.days, rows)
