"""Loading a folder of a user's files: each kind read into records, a file that cannot be loaded is one line
naming it and why (the rest goes on), ids come from paths, and a folder that cannot be used is one error."""

from __future__ import annotations

from pathlib import Path

import pytest

from coworkenv.servers.kit.seed import parse_seed
from coworkenv.servers.registry import get_service
from coworkenv.synth.generate.resources import ResourceError, load_resources
from coworkenv.synth.generate.resources.records import grounded_seed
from tests.synth.generate.resources.files import write_folder


def test_each_kind_of_file_loads_into_its_records(tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path, bad=False))
    assert rs.problems == ()
    assert [d.title for d in rs.documents] == ["notes", "Travel policy"]
    budget = next(s for s in rs.sheets if s.name == "budget.csv")
    assert budget.header == ("team", "quarter", "spend") and len(budget.rows) == 5
    assert budget.column("spend")[0] == "1200.50"
    invoice = next(m for m in rs.mails if m.subject.startswith("Invoice"))
    assert (invoice.from_name, invoice.from_address) == ("Orbit Labs Accounts", "accounts@orbitlabs.example")
    assert invoice.to == ("priya@ourco.example",) and invoice.cc == ("books@ourco.example",)
    assert invoice.date == "2026-05-15T08:00:00Z" and invoice.message_id == "<ol-7791@orbitlabs.example>"
    assert "Total due: $2,340.00" in invoice.body and "<p>" not in invoice.body
    assert [a.filename for a in invoice.attachments] == ["OL-7791.pdf"]
    newsletter = next(m for m in rs.mails if m.subject == "This week")
    assert "Three things & a picture." in newsletter.body and "<" not in newsletter.body
    review, holiday = rs.events
    assert (review.summary, review.start, review.end) == (
        "Vendor review",
        "2026-05-19T08:00:00Z",
        "2026-05-19T09:30:00Z",
    )
    assert review.location == "Room Atlas" and review.organizer == "priya@ourco.example"
    assert [(a.email, a.response) for a in review.attendees] == [
        ("tom@ourco.example", "accepted"),
        ("ana@orbitlabs.example", "tentative"),
    ]
    assert review.description == "Go through the open, unpaid invoices."
    assert (holiday.start, holiday.end) == ("2026-05-25T00:00:00Z", "2026-05-26T00:00:00Z")


def test_a_file_that_cannot_be_loaded_is_one_line_naming_it_and_the_rest_loads(tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path))
    assert rs.counts() == {"documents": 2, "sheets": 2, "mails": 2, "events": 2}
    lines = {line.split(":")[0]: line for line in rs.problems}
    assert set(lines) == {
        "skipped broken.csv",
        "skipped empty.md",
        "skipped huge.txt",
        "skipped latin1.txt",
        "skipped no-sender.eml",
        "skipped no-start.ics",
        "skipped not-a-calendar.ics",
        "skipped slides.pdf",
    }
    assert "line 2 has 3 fields" in lines["skipped broken.csv"]
    assert "not UTF-8" in lines["skipped latin1.txt"] and "too large" in lines["skipped huge.txt"]
    assert "From" in lines["skipped no-sender.eml"] and "DTSTART" in lines["skipped no-start.ics"]
    assert "VCALENDAR" in lines["skipped not-a-calendar.ics"] and "unknown kind (.pdf)" in lines["skipped slides.pdf"]
    assert all("\n" not in line for line in rs.problems)


def test_the_same_folder_loads_into_the_same_ids_and_fingerprint(tmp_path: Path) -> None:
    first, again = load_resources(write_folder(tmp_path)), load_resources(tmp_path)
    assert first == again and first.fingerprint() == again.fingerprint()
    assert [d.id for d in first.documents] == ["docs_notes_txt", "docs_travel_policy_md"]
    assert [e.id for e in first.events] == ["calendar_ics_1", "calendar_ics_2"]
    (tmp_path / "docs" / "notes.txt").write_text("Parking: level three\n", encoding="utf-8")
    assert load_resources(tmp_path).fingerprint() != first.fingerprint()


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: p / "missing", "no such folder"),
        (lambda p: (p / "file.md").write_text("# x\n") and p / "file.md", "not a folder"),
        (lambda p: p, "the folder is empty"),
        (lambda p: (p / "a.pdf").write_text("x") and p, "none of its 1 file(s) could be loaded"),
    ],
)
def test_a_folder_that_cannot_be_used_is_one_line(tmp_path: Path, make: object, says: str) -> None:
    with pytest.raises(ResourceError) as caught:
        load_resources(make(tmp_path))  # type: ignore[operator]
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_the_loaded_records_make_a_seed_each_service_accepts(tmp_path: Path) -> None:
    rs = load_resources(write_folder(tmp_path))
    seed = grounded_seed(
        rs, ("docs", "files", "email", "calendar"), "priya@ourco.example", "Priya", "2026-05-01T09:00:00Z"
    )
    assert [len(seed[s][t]) for s, t in (("docs", "documents"), ("files", "files"), ("email", "messages"))] == [2, 2, 2]
    for service, tables in seed.items():
        parse_seed(get_service(service), tables)
    assert seed["calendar"]["events"][0]["organizer"] == "priya@ourco.example"
    assert seed["email"]["messages"][0]["attachments"][0]["filename"] == "OL-7791.pdf"


def test_the_example_folder_of_the_repository_loads_whole() -> None:
    rs = load_resources(Path(__file__).parents[4] / "example-files")
    assert rs.problems == () and all(rs.counts().values())
