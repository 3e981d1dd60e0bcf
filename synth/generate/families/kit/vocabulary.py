"""A curated vocabulary for background records: everyday office mail, newsletters, finished support questions,
CRM notes, internal documents and chat, composed from small pools into thousands of distinct texts.

:class:`Phrasebook` draws from the builder's seeded ``rng`` and never gives the same text twice in one task. No
text names money, a bank, an invoice, a renewal, a refund, a dispute, a budget, a sync, a contact list or a
team or project of the multi-turn families, so background never meets a task's criteria or its searches.
"""

from __future__ import annotations

import random
from collections.abc import Callable

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
TIMES = ("9:30", "10:00", "11:00", "12:30", "2:00", "3:30", "4:00")
EVENTS = (
    "team lunch", "book club", "fire drill", "coffee chat", "all-hands", "hackathon kickoff", "wellness talk",
    "pizza Friday", "quiz night", "plant swap", "lunch and learn", "chess meetup", "photo walk", "running club",
    "volunteering day", "welcome breakfast", "farewell drinks", "birthday cake", "yoga session", "board games night",
)  # fmt: skip
OFFICE = (
    "the third-floor kitchen", "the bike room", "the parking garage", "the lifts", "the main meeting room",
    "the printer on floor two", "the front desk", "the phone booths", "the roof terrace", "the coat room",
    "the lockers", "the quiet room", "the coffee machine", "the visitor badges", "the air conditioning",
)  # fmt: skip
OFFICE_NEWS = (
    "will be closed for maintenance", "is being repainted", "gets new furniture", "is out of order",
    "has a new booking system", "will be cleaned", "reopens after the works", "moves to the ground floor",
)  # fmt: skip
PUBLICATIONS = (
    "SaaS Weekly", "Design Digest", "Ops Review", "The Remote Manager", "Cloud Native Times", "Product Notes",
    "Data Points", "The Support Letter", "Growth Memo", "Engineering Dispatch", "Future of Work Brief",
    "Customer Voice", "Leadership Minute", "Analytics Roundup",
)  # fmt: skip
HEADLINES = (
    "{n} dashboards we loved this {period}", "how {kind} teams plan their quarter", "{n} habits of calm on-call "
    "engineers", "what we learned from {n} customer interviews", "the case for shorter meetings",
    "a field guide to {kind} onboarding", "{n} tools worth a look this {period}", "why {kind} teams write things "
    "down", "inside a {kind} team's weekly review", "{n} questions to ask before a launch",
    "lessons from a {kind} migration", "{n} ways to cut alert fatigue",
)  # fmt: skip
KINDS = ("remote", "hybrid", "small", "fast-growing", "distributed", "early-stage", "global", "lean")
PERIODS = ("week", "month", "quarter", "season")
FEATURES = (
    "saved views", "dark mode", "report scheduling", "custom fields", "bulk edit", "keyboard shortcuts",
    "CSV templates", "user groups", "notification settings", "time zone display", "API tokens", "audit filters",
    "workspace themes", "email digests", "column sorting", "favourites", "tag colours", "print layouts",
    "the mobile widget", "two-column layout", "auto-archive", "field validation", "role templates",
)  # fmt: skip
QUESTIONS = (
    ("How do I turn on {feature}?", "We'd like to enable {feature} for {who}. Where is the setting?"),
    ("Question about {feature}", "Does {feature} work the same way for {who}?"),
    ("Can {feature} be limited to admins?", "We want only admins to change {feature}. Is that possible?"),
    ("Where did {feature} go?", "After the redesign I can't find {feature} any more; could you point me to it?"),
    ("Feature idea: {feature}", "It would help {who} if {feature} could be set per user."),
    ("Docs for {feature}", "Is there a help article on {feature} we can share with {who}?"),
)  # fmt: skip
WHO = ("our admins", "the new hires", "our managers", "the whole team", "our interns", "our night shift")
ANSWERS = (
    "Thanks, that worked.", "Found it, all good now.", "Great, we'll share the article.", "Perfect, thank you!",
    "Makes sense, closing this.", "That answers it, thanks.",
)  # fmt: skip
CRM_TOPICS = (
    "quarterly business review", "onboarding check-in", "training session", "roadmap preview", "usage review",
    "executive intro", "product feedback session", "reference call", "health check", "kick-off meeting",
    "feature walkthrough", "admin training", "success plan review", "workshop planning",
)  # fmt: skip
CRM_OUTCOMES = (
    "went well", "was moved to next week", "raised a few questions on {feature}", "ended with clear next steps",
    "covered {feature} in depth", "was short but useful", "had the whole team on the line",
)  # fmt: skip
DOC_AREAS = (
    "Travel policy", "Expense guidelines", "Brand voice", "Interview loop", "Desk booking", "Office move",
    "Parental leave", "Laptop refresh", "Holiday calendar", "Writing style", "Meeting etiquette", "Accessibility",
    "Incident glossary", "Code review", "Release checklist", "Remote work", "Mentoring programme",
    "Learning stipend", "Guest wifi", "Recycling",
)  # fmt: skip
DOC_KINDS = ("guide", "FAQ", "checklist", "notes", "draft", "playbook", "overview", "principles")
DOC_LINES = (
    "Ask in the help channel if anything is unclear.", "This page is reviewed every quarter.",
    "Owners: the people team.", "Last reviewed in the spring.", "Suggestions welcome as comments.",
    "See the handbook for the full version.", "Links to the forms are at the bottom.",
    "New joiners should read this in their first week.", "Examples are in the appendix.",
)  # fmt: skip
CHAT = (
    "Anyone up for {event} on {day}?", "Reminder: {event} at {time} on {day}.", "Heads-up: {office} {news}.",
    "Nice work on {feature}, everyone!", "Who has the key to {office}?", "Photos from the {event} are up.",
    "Does anyone know if {office} {news}?", "Thanks for organising the {event}!", "Running late, start without me.",
    "Back from leave - what did I miss?", "Shared the {doc} in the drive.", "Can I borrow a charger near {office}?",
)  # fmt: skip
CHANNELS = ("random", "watercooler", "announcements", "kudos", "office-life", "til")
STOP = (
    "bank", "invoice", "renewal", "refund", "dispute", "budget", "sync", "contact", "taken over", "urgent",
    "charge", "payout", "password", "$",
)  # fmt: skip


class Phrasebook:
    """Background texts for one task, drawn from ``rng``, none given twice."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _fresh(self, make: Callable[[], tuple[str, str]], by_head: bool = False) -> tuple[str, str]:
        for _ in range(60):
            head, body = make()
            key = head if by_head else f"{head}\n{body}"
            if key not in self.used and not any(w in key.lower() for w in STOP):
                self.used.add(key)
                return head, body
        raise RuntimeError("the background vocabulary is exhausted for this task")

    def _fill(self, template: str) -> str:
        r = self.rng
        return template.format(
            n=r.choice((3, 4, 5, 6, 7, 8, 10, 12)),
            period=r.choice(PERIODS),
            kind=r.choice(KINDS),
            feature=r.choice(FEATURES),
            who=r.choice(WHO),
            event=r.choice(EVENTS),
            day=r.choice(WEEKDAYS),
            time=r.choice(TIMES),
            office=r.choice(OFFICE),
            news=r.choice(OFFICE_NEWS),
            doc=f"{r.choice(DOC_AREAS).lower()} {r.choice(DOC_KINDS)}",
        )

    def internal_mail(self) -> tuple[str, str]:
        def make() -> tuple[str, str]:
            r = self.rng
            if r.random() < 0.5:
                event, day, time = r.choice(EVENTS), r.choice(WEEKDAYS), r.choice(TIMES)
                subject = f"{event[0].upper()}{event[1:]} on {day}"
                return subject, f"We're planning the {event} for {day} at {time}. Reply if you can make it."
            office, news = r.choice(OFFICE), r.choice(OFFICE_NEWS)
            return f"Facilities: {office}", f"Quick note: {office} {news} on {r.choice(WEEKDAYS)}."

        return self._fresh(make)

    def newsletter(self) -> tuple[str, str, str]:
        """(publication, subject, body)."""
        pub = self.rng.choice(PUBLICATIONS)

        def make() -> tuple[str, str]:
            line = self._fill(self.rng.choice(HEADLINES))
            subject = f"{pub}: {line[0].upper()}{line[1:]}"
            return subject, f"{subject}.\n\nRead more on our site. You receive this because you subscribed."

        subject, body = self._fresh(make)
        return pub, subject, body

    def question(self) -> tuple[str, str, str]:
        """A finished how-to ticket: (subject, description, closing answer)."""
        answer = self.rng.choice(ANSWERS)

        def make() -> tuple[str, str]:
            subject, body = self.rng.choice(QUESTIONS)
            feature, who = self.rng.choice(FEATURES), self.rng.choice(WHO)
            return subject.format(feature=feature), body.format(feature=feature, who=who)

        subject, body = self._fresh(make, by_head=True)
        return subject, body, answer

    def crm_note(self) -> tuple[str, str]:
        def make() -> tuple[str, str]:
            topic = self.rng.choice(CRM_TOPICS)
            outcome = self._fill(self.rng.choice(CRM_OUTCOMES))
            return f"{topic[0].upper()}{topic[1:]}", f"The {topic} {outcome}."

        return self._fresh(make)

    def document(self) -> tuple[str, str]:
        def make() -> tuple[str, str]:
            title = f"{self.rng.choice(DOC_AREAS)} {self.rng.choice(DOC_KINDS)}"
            lines = self.rng.sample(DOC_LINES, 3)
            return title, f"# {title}\n\n" + "\n".join(f"- {line}" for line in lines)

        return self._fresh(make, by_head=True)

    def chat(self) -> str:
        return self._fresh(lambda: ("", self._fill(self.rng.choice(CHAT))))[1]
