"""The LLM generator grounded on a user's files (``coworkenv synth --generator llm --from DIR``): the loaded
records of the cell's services go into the writer's prompt as seed records to build the task around, and into
every draft's ``initial_records`` as they were loaded (a draft's copy of one is replaced by the original, so a
shortened or edited copy never stands in for the file), attached to the draft's own primary user, mailbox and
calendar (or, where the draft has none, to the ones shown in the prompt)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from coworkenv.synth.generate.resources.model import ResourceSet
from coworkenv.synth.generate.resources.records import MY_FILES, Seed, folder_record, grounded_seed

MAX_SHOWN = 25
"""The most loaded records of one table shown and kept in a draft."""
PROMPT_TEXT = 1_500
"""The longest text of a record shown in the prompt (the seed keeps it whole)."""
CREATED = "2025-12-01T09:00:00Z"
CONTENT = {"docs": "documents", "files": "files", "email": "messages", "calendar": "events"}
"""The table of each service that holds the loaded records themselves."""


def owner_of(rs: ResourceSet) -> tuple[str, str]:
    """(address, name) of the person whose files these are: the address the loaded mail is sent to most."""
    seen = Counter(a for m in rs.mails for a in (*m.to, *m.cc))
    address = seen.most_common(1)[0][0] if seen else "me@example.com"
    return address, address.split("@")[0].replace(".", " ").title()


def seed_of(rs: ResourceSet, services: tuple[str, ...]) -> Seed:
    address, name = owner_of(rs)
    seed = grounded_seed(rs, services, address, name, CREATED)
    for service, table in CONTENT.items():
        if service in seed:
            seed[service][table] = seed[service][table][:MAX_SHOWN]
    return seed


def grounding_text(rs: ResourceSet, services: tuple[str, ...]) -> str:
    """The prompt block: the loaded records of ``services`` and how to use them."""
    seed = seed_of(rs, services)
    if not seed:
        return ""
    shown: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for service, tables in seed.items():
        shown[service] = {t: [_short(r) for r in rows] for t, rows in tables.items()}
    return (
        "\n\nGround this task on the user's own files. They are loaded as these seed records (long texts are "
        "shortened here; the seed keeps them whole):\n```json\n"
        + json.dumps(shown, indent=1, ensure_ascii=False)
        + "\n```\nPut them in initial_records unchanged (same ids), beside whatever else the task needs, and "
        "make one of them the subject of the task: the request and the checks are about what these files say "
        "(a figure in a sheet, a fact in a document, an invoice in a mail, a meeting in the calendar). The request "
        "names the file or record the way the user would and never states what the agent is meant to find in it."
    )


def _short(record: dict[str, Any]) -> dict[str, Any]:
    out = dict(record)
    for key in ("content", "body", "description"):
        text = out.get(key)
        if isinstance(text, str) and len(text) > PROMPT_TEXT:
            out[key] = text[:PROMPT_TEXT] + " [...]"
    return out


def ground_draft(doc: dict[str, Any], rs: ResourceSet, services: tuple[str, ...]) -> dict[str, Any]:
    """``doc`` with the loaded records of its services in ``initial_records`` as loaded, attached to the draft's
    primary user, mailbox and calendar."""
    seed = seed_of(rs, services)
    records = doc.get("initial_records")
    initial: dict[str, Any] = dict(records) if isinstance(records, dict) else {}
    for service, tables in seed.items():
        mine = initial.get(service)
        mine = {t: list(v) for t, v in mine.items() if isinstance(v, list)} if isinstance(mine, dict) else {}
        _attach(service, mine, tables)
        initial[service] = mine
    return {**doc, "initial_records": initial}


def _primary(rows: list[Any], key: str) -> str | None:
    return next((str(r[key]) for r in rows if isinstance(r, dict) and r.get("is_primary") and r.get(key)), None)


def _attach(service: str, mine: dict[str, list[Any]], loaded: dict[str, list[dict[str, Any]]]) -> None:
    members = "mailboxes" if service == "email" else "users"
    key = "address" if service == "email" else "email"
    owner = _primary(mine.get(members, []), key)
    if owner is None:
        owner = str(loaded[members][0][key])
        mine[members] = [r for r in mine.get(members, []) if not (isinstance(r, dict) and r.get(key) == owner)]
        mine[members] += loaded[members][:1]
    table = CONTENT[service]
    ids = {r["id"] for r in loaded[table]}
    mine[table] = [r for r in mine.get(table, []) if not (isinstance(r, dict) and r.get("id") in ids)]
    if service == "docs":
        mine[table] += [{**r, "owner": owner} for r in loaded[table]]
    elif service == "files":
        if not any(isinstance(f, dict) and f.get("id") == MY_FILES for f in mine.get("folders", [])):
            mine.setdefault("folders", []).append(folder_record())
        mine[table] += [{**r, "owner": owner} for r in loaded[table]]
    elif service == "email":
        mine[table] += [{**r, "mailbox": owner} for r in loaded[table]]
    else:
        _attach_events(mine, loaded, owner)


def _attach_events(mine: dict[str, list[Any]], loaded: dict[str, list[dict[str, Any]]], owner: str) -> None:
    calendars = mine.setdefault("calendars", [])
    cal = next(
        (c["id"] for c in calendars if isinstance(c, dict) and c.get("owner") == owner and c.get("is_primary")), None
    )
    if cal is None:
        cal = "cal_me"
        calendars.append({"id": cal, "owner": owner, "summary": owner, "is_primary": True})
    users = mine.setdefault("users", [])
    known = {u.get("email") for u in users if isinstance(u, dict)}
    for u in loaded["users"][1:]:
        if u["email"] not in known:
            users.append(u)
            known.add(u["email"])
    mine["events"] += [
        {**e, "calendar_id": cal, "organizer": e["organizer"] if e["organizer"] in known else owner}
        for e in loaded["events"]
    ]
