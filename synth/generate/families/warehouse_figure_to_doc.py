"""Warehouse and docs: a business review document has a placeholder for one figure (a region's revenue over last
week, on medium and hard of one channel); the agent queries the warehouse and writes the figure into the
document in place of the placeholder, leaving last period's review and the rest of the document as they were."""

from __future__ import annotations

import re

from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import FINANCE, USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.warehouse_common import (
    REGIONS,
    amount_rx,
    sales,
    staging_copy,
    usd,
    warehouse,
)

PLACEHOLDER = "TBD (from the warehouse)"


def _review(title: str, label: str, value: str, other_lines: list[str]) -> str:
    lines = "\n".join(f"- {x}" for x in other_lines)
    return f"# {title}\n\n## Figures\n\n- {label}: {value}\n{lines}\n\n## Notes\n\nDiscussion points to follow.\n"


@register_family
class WarehouseFigureToDoc(Family):
    name = "warehouse-figure-to-doc"
    scenario = "a warehouse figure written into a business review document"
    capabilities = (CROSS, MULTISTEP, DISTRACTORS)
    service_options = (("warehouse", "docs"),)
    distractors = "last period's review document with the same heading; the staging copy of the orders table"

    def build(self, b: TaskBuilder) -> str:
        w = warehouse(b)
        real = sales(b, w, 14 + b.n_filler())
        fake = staging_copy(b, w, real)
        w.decoys()
        w.background(b.n_filler())
        region = b.rng.choice(REGIONS[:3])
        where: dict[str, str] = {"region": region}
        if b.difficulty != "easy":
            where["channel"] = b.pick("web", "partner")
        week = real.days[-7:]
        answer = real.total("revenue", week, **where)
        wrong = sorted({real.total("revenue", week, region=region), fake.total("revenue", week, **where),
                        real.total("revenue", real.days[-14:-7], **where)} - {answer})  # fmt: skip
        scope = " ".join(where.values())
        label = f"{scope} revenue, {week[0]} to {week[-1]}"
        others = [f"New customers: {b.rng.randint(12, 60)}", f"Churned customers: {b.rng.randint(1, 9)}"]
        for s in [USER, FINANCE]:
            b.add("docs", "users", {"id": s.key, "email": s.email, "name": s.name, "title": s.title,
                                    "is_primary": s is USER})  # fmt: skip
        title = f"Weekly business review - week of {week[0]}"
        doc = b.add("docs", "documents", {
            "id": b.uid("doc_", "weekly review"), "title": title,
            "content": _review(title, label, PLACEHOLDER, others), "owner": USER.email, "workspace_role": "editor",
            "revision": 1, "created_at": b.ago(days=1),
        })  # fmt: skip
        last_title = f"Weekly business review - week of {real.days[-14]}"
        last_label = f"{scope} revenue, {real.days[-14]} to {real.days[-8]}"
        old = b.add("docs", "documents", {
            "id": b.uid("doc_", "weekly review old"), "title": last_title,
            "content": _review(last_title, last_label, usd(wrong[-1]), others), "owner": FINANCE.email,
            "workspace_role": "editor", "revision": 1, "created_at": b.ago(days=8),
        })  # fmt: skip
        b.distract(old["id"])

        filters = " AND ".join(f"{k} = '{v}'" for k, v in where.items())
        sql = f"SELECT SUM(revenue) FROM orders WHERE {filters} AND day >= '{week[0]}' AND day <= '{week[-1]}'"
        b.call("docs", "search_documents", "found", query="Weekly business review")
        b.call("docs", "get_document", document_id=doc["id"])
        b.call("warehouse", "run_query", sql=sql)
        b.call("docs", "edit_document", document_id=doc["id"], operation="replace", find=PLACEHOLDER,
               text=usd(answer))  # fmt: skip
        b.say(f"The review now shows {label}: {usd(answer)}.")
        with b.alternative():
            b.call("warehouse", "run_query", sql=sql.replace("SELECT SUM(revenue)", "SELECT day, SUM(revenue)")
                   + " GROUP BY day")  # fmt: skip
            b.call("docs", "search_documents", query=title)
            b.call("docs", "edit_document", document_id=doc["id"], operation="replace",
                   find=f"- {label}: {PLACEHOLDER}", text=f"- {label}: {usd(answer)}")  # fmt: skip
            b.say(f"Filled in {label}: {usd(answer)}.")

        self._grade(b, doc, old, label, answer, others)
        b.may_name += [title, region]
        channel = f" ({where['channel']} channel)" if "channel" in where else ""
        ask = Ask(
            steps=[f"fill in last week's {{region}}{channel} revenue in the {{title}} doc from the warehouse"],
            context="The weekly review goes out this afternoon and one figure is still missing.",
            topic="weekly review figure",
        )
        return compose(b, ask, region=region, title=title)

    def _grade(self, b: TaskBuilder, doc: Json, old: Json, label: str, answer: int, others: list[str]) -> None:
        b.check(
            "figure_in_doc",
            0.45,
            f"The review document gives {label} as {usd(answer)}, where the placeholder was.",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": doc["id"],
             "fields": {"content": {"regex": rf"- {_rx(label)}: \$?{amount_rx(answer)}"}}},
        )  # fmt: skip
        b.check(
            "rest_kept",
            0.2,
            "The rest of the document (the other figures and the notes) is still there.",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": doc["id"],
             "fields": {"content": {"regex": "(?s)^" + "".join(f"(?=.*{_rx(x)})" for x in [*others, "## Notes"])}}},
            ("figure_in_doc",),
        )  # fmt: skip
        b.check(
            "old_review_kept",
            0.35,
            "Last period's review is as it was.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": [old["id"]]},
            ("figure_in_doc",),
        )
        b.forbid_call(
            "edited_old_review",
            "Writing the figure into last period's review instead of (or as well as) this week's.",
            "docs",
            "edit_document",
            {"document_id": old["id"]},
            {"document_id": old["id"], "operation": "append", "text": f"- {label}: {usd(answer)}"},
        )


def _rx(text: str) -> str:
    return re.escape(text)
