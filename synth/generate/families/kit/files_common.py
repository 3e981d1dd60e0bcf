"""What the shared-drive families share: the members of a task in the files service, folders, files (CSV
tables written from rows), and background files that never meet a task's criteria."""

from __future__ import annotations

from dataclasses import dataclass, field

from coworkenv.synth.generate.families.kit.base import Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import ACCOUNT_MANAGERS, AGENTS, FINANCE, USER, Staff, slug

CREATED = "2025-10-01T09:00:00Z"
FOLDERS = ("Finance", "Customers", "Support", "Team", "Archive")
BACKGROUND = (
    ("Onboarding checklist.md", "# Onboarding checklist\n\n- Laptop and accounts\n- Meet the team\n- First ticket"),
    ("Offsite ideas.md", "# Offsite ideas\n\n- Lisbon in spring\n- A day of hacking\n- Team dinner"),
    ("Support macros.txt", "Greeting: Thanks for reaching out!\nClosing: Let us know if anything else comes up."),
    ("Release notes draft.md", "# Release notes\n\n- Faster search\n- New export options\n- Bug fixes"),
    ("Style guide.md", "# Writing style\n\nShort sentences. Active voice. No jargon."),
    ("On-call rota.txt", "Week 1: Kim\nWeek 2: Omar\nWeek 3: Kim\nWeek 4: Omar"),
    ("Meeting room tips.txt", "Book rooms a day ahead. Free the room if plans change."),
    ("Q2 retro.md", "# Q2 retro\n\nWent well: launch on time.\nTo improve: fewer late changes."),
    ("Interview questions.md", "# Interview questions\n\n1. Tell us about a hard bug.\n2. How do you prioritise?"),
    ("Travel policy.md", "# Travel policy\n\nBook economy for flights under six hours."),
)


TOPICS = (
    "Hiring plan", "Q3 planning", "Team onboarding", "Security review", "Partner program", "Support tooling",
    "Offsite", "Roadmap", "Release 4.2", "Mobile beta", "Accessibility audit", "Docs migration", "Load testing",
    "Design system", "Customer advisory board", "Knowledge base",
)  # fmt: skip
KINDS = (
    ("notes", "Notes from the last session: agreed owners, open questions parked for next time."),
    ("draft", "First draft. Comments welcome before Friday; the structure may still change."),
    ("checklist", "- Owner confirmed\n- Dates agreed\n- Risks listed\n- Sign-off pending"),
    ("summary", "Short summary for the team: status green, two follow-ups, nothing blocked."),
    ("ideas", "Loose ideas collected in the brainstorm; nothing decided yet."),
)
"""Background documents: '<topic> <kind>.md', each name at most once a task."""


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    """A CSV document (values here never hold commas or quotes)."""
    return "\n".join(",".join(r) for r in [header, *rows]) + "\n"


@dataclass
class Drive:
    """The members and folders of one task's drive."""

    b: TaskBuilder
    staff: list[Staff]
    folders: dict[str, str] = field(default_factory=dict)

    def file(
        self,
        name: str,
        content: str,
        owner: Staff,
        folder: str | None = None,
        days: float = 10,
        shares: list[tuple[str, str]] | None = None,
    ) -> Json:
        record: Json = {
            "id": self.b.uid("file_", name.rsplit(".", 1)[0]),
            "name": name,
            "folder_id": self.folders.get(folder) if folder else None,
            "content": content,
            "owner": owner.email,
            "shares": [{"email": e, "role": r} for e, r in shares or []],
            "created_at": self.b.ago(days=days),
        }
        return self.b.add("files", "files", record)

    def filler(self, n: int) -> None:
        """``n`` background files (never a task's target): the shared pool first, then '<topic> <kind>.md'."""
        rng = self.b.rng
        docs = rng.sample(BACKGROUND, min(n, len(BACKGROUND)))
        taken = {name for name, _ in BACKGROUND}
        more = [(f"{t} {k}.md", f"# {t} {k}\n\n{text}\n") for t in TOPICS for k, text in KINDS]
        more = [m for m in more if m[0] not in taken]
        docs += rng.sample(more, min(max(0, n - len(docs)), len(more)))
        for name, content in docs:
            folder = rng.choice([*(f for f in self.folders if f in FOLDERS), None])
            self.file(name, content, rng.choice(self.staff), folder, rng.randint(5, 90))


def drive(b: TaskBuilder, staff: list[Staff] | None = None) -> Drive:
    """The members (the user first) and the top-level folders."""
    people = staff or [USER, *ACCOUNT_MANAGERS, FINANCE, *AGENTS]
    for s in people:
        b.add(
            "files", "users", {"id": s.key, "email": s.email, "name": s.name, "title": s.title, "is_primary": s is USER}
        )
    d = Drive(b, people)
    for name in FOLDERS:
        fid = "fld_" + slug(name)
        b.add("files", "folders", {"id": fid, "name": name, "parent_id": None, "created_at": CREATED})
        d.folders[name] = fid
    return d
