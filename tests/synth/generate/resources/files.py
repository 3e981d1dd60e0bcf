"""A folder of ordinary files written by the tests: one of each kind that loads, and some that do not."""

from __future__ import annotations

from pathlib import Path

POLICY = """# Travel policy

Owner: Ines Carvalho
- Hotel chain: Northstar Inns
- Daily allowance: $60

Book economy for flights under six hours.
"""
BUDGET = """team,quarter,spend
Design,Q1,1200.50
Design,Q2,800.00
Ops,Q1,430.25
Ops,Q2,99.75
Legal,Q1,2000.00
"""
LEDGER = """supplier,ref,amount
Kestrel Paper,KP-501,310.00
Orbit Labs,OL-7730,1450.50
Marlow Catering,MC-0042,275.00
Tern Freight,TF-88,612.40
"""
INVOICE = """From: Orbit Labs Accounts <accounts@orbitlabs.example>
To: Priya Nair <priya@ourco.example>
Cc: books@ourco.example
Subject: Invoice OL-7791 for May
Date: Fri, 15 May 2026 10:00:00 +0200
Message-ID: <ol-7791@orbitlabs.example>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="xx"

--xx
Content-Type: multipart/alternative; boundary="yy"

--yy
Content-Type: text/plain; charset="utf-8"

Dear Priya,

Please find invoice OL-7791 attached.
Total due: $2,340.00 within 30 days.
--yy
Content-Type: text/html; charset="utf-8"

<p>Dear Priya, please find invoice OL-7791 attached.</p>
--yy--
--xx
Content-Type: application/pdf; name="OL-7791.pdf"
Content-Disposition: attachment; filename="OL-7791.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--xx--
"""
HTML_ONLY = """From: news@weekly.example
To: priya@ourco.example
Subject: This week
Date: Mon, 11 May 2026 07:00:00 +0000
Content-Type: text/html; charset="utf-8"

<html><body><h1>Hello</h1><p>Three things &amp; a picture.</p></body></html>
"""
CALENDAR = """BEGIN:VCALENDAR
VERSION:2.0
BEGIN:VEVENT
SUMMARY:Vendor review
DTSTART;TZID=Europe/Berlin:20260519T100000
DURATION:PT1H30M
LOCATION:Room Atlas
ORGANIZER;CN=Priya Nair:mailto:priya@ourco.example
ATTENDEE;CN=Tom Reyes;PARTSTAT=ACCEPTED:mailto:tom@ourco.example
ATTENDEE;CN=Ana Lind;PARTSTAT=TENTATIVE:mailto:ana@orbitlabs.example
DESCRIPTION:Go through the open\\, unpaid invoices.
END:VEVENT
BEGIN:VEVENT
SUMMARY:Company holiday
DTSTART;VALUE=DATE:20260525
END:VEVENT
END:VCALENDAR
"""
BAD = {
    "broken.csv": 'a,b\n1,2,3\n"unclosed\n',
    "no-sender.eml": "To: priya@ourco.example\nSubject: hi\nDate: Mon, 11 May 2026 07:00:00 +0000\n\nbody\n",
    "not-a-calendar.ics": "BEGIN:VTODO\nSUMMARY:x\nEND:VTODO\n",
    "no-start.ics": "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:Lost\nEND:VEVENT\nEND:VCALENDAR\n",
    "slides.pdf": "%PDF-1.4\n",
    "empty.md": "   \n",
}


def write_folder(root: Path, bad: bool = True) -> Path:
    """The good files (one of each kind, in sub-folders), and with ``bad`` the malformed ones too."""
    (root / "docs").mkdir(parents=True)
    (root / "sheets").mkdir()
    (root / "mail").mkdir()
    (root / "docs" / "travel-policy.md").write_text(POLICY, encoding="utf-8")
    (root / "docs" / "notes.txt").write_text("Parking: level two\nWi-Fi name: ourco-guest\n", encoding="utf-8")
    (root / "sheets" / "budget.csv").write_text(BUDGET, encoding="utf-8")
    (root / "sheets" / "ledger.csv").write_text(LEDGER, encoding="utf-8")
    (root / "mail" / "invoice.eml").write_text(INVOICE, encoding="utf-8")
    (root / "mail" / "newsletter.eml").write_text(HTML_ONLY, encoding="utf-8")
    (root / "calendar.ics").write_text(CALENDAR, encoding="utf-8")
    (root / ".hidden.md").write_text("# not loaded\n", encoding="utf-8")
    if bad:
        for name, text in BAD.items():
            (root / name).write_text(text, encoding="utf-8")
        (root / "latin1.txt").write_bytes("Caf\xe9 menu".encode("latin-1"))
        (root / "huge.txt").write_text("x" * 600_000, encoding="utf-8")
    return root
