"""Email families: routing a customer's question to the colleague who can answer it."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import COMMS, DISTRACTORS, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.names import FINANCE, USER, Company, Staff
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, filler_mail, mail
from coworkenv.synth.generate.families.kit.texts import TOPICS


@register_family
class ForwardQuestion(Family):
    name = "email-forward-question"
    scenario = "routing a customer question"
    capabilities = (DISTRACTORS, COMMS)
    service_options = (("email",),)
    distractors = (
        "an older email from the same customer on another topic; the same question from another customer; "
        "(hard) a colleague's unrelated unread email"
    )

    def build(self, b: TaskBuilder) -> str:
        cast = Cast(b)
        x = cast.company(contacts=1)
        y = cast.company(contacts=1)
        cast.email()
        colleague = b.rng.choice([*cast.managers[:2], FINANCE])
        (subject, ask, keyword), (other_subject, other_ask, _) = b.rng.sample(TOPICS, 2)
        p = x.contacts[0]
        target = self._seed(b, x, y, colleague, (subject, ask), (other_subject, other_ask))
        self._reference(b, x, colleague, target, ask)
        self._checks(b, x, colleague, target, keyword)
        dont = b.pick(
            "Don't reply to {first} yourself.",
            "Please don't answer {first} directly; {colleague} should.",
            "Leave the answer to {colleague}.",
        )
        if b.hard:
            dont = "{colleague} needs to confirm the details before anyone answers."
        wording = Ask(
            steps=(
                b.pick("forward the email to {colleague}", "pass it on to {colleague}", "send it on to {colleague}"),
                b.pick("mark it as read", "mark it read", "clear its unread flag"),
            ),
            context=b.pick(
                "{first} at {company} wrote to me ('{subject}').",
                "There's an email from {first} ({company}) titled '{subject}'.",
                "{company} sent a question: '{subject}', from {first}.",
            ),
            avoid=dont,
            topic="{company} question",
        )
        backdrop(b)
        return compose(b, wording, first=p.first, company=x.name, subject=subject, colleague=colleague.first)

    @staticmethod
    def _seed(
        b: TaskBuilder, x: Company, y: Company, colleague: Staff, topic: tuple[str, str], other: tuple[str, str]
    ) -> str:
        """The customer's question (returns its id), the distractors and the filler."""
        (subject, ask), (other_subject, other_ask) = topic, other
        p, q = x.contacts[0], y.contacts[0]
        body = f"Hi {USER.first},\n\nCould you tell me {ask}?\n\nThanks,\n{p.name}\n{p.title}, {x.name}"
        target = mail(b, (p.name, x.email(p)), subject, body, b.ago(hours=b.rng.randint(1, 20)))
        decoys = [
            mail(
                b,
                (p.name, x.email(p)),
                other_subject,
                f"Hi,\n\nQuick one: {other_ask}?\n\n{p.first}",
                b.ago(days=b.rng.randint(2, 9)),
            )
        ]
        if b.difficulty != "easy":
            decoys.append(
                mail(
                    b,
                    (q.name, y.email(q)),
                    subject,
                    f"Hello,\n\nWe also wonder {ask}.\n\n{q.name}",
                    b.ago(hours=b.rng.randint(2, 40)),
                )
            )
        if b.hard:
            note = "Can you send me the onboarding checklist when you have a minute?"
            decoys.append(mail(b, (colleague.name, colleague.email), "Onboarding checklist", note, b.ago(hours=3)))
        b.distract(*(d["id"] for d in decoys))
        filler_mail(b, b.n_filler())
        return str(target["id"])

    @staticmethod
    def _reference(b: TaskBuilder, x: Company, colleague: Staff, target: str, ask: str) -> None:
        p = x.contacts[0]
        b.call("email", "search_messages", "found", from_address=x.domain)
        note = f"{colleague.first}, {p.name} at {x.name} asks {ask}. Could you answer them directly?"
        b.call("email", "forward_message", message_id=target, to=[colleague.email], body=note)
        b.call("email", "modify_labels", message_id=target, remove_label_ids=["UNREAD"])
        with b.alternative():  # found by its subject among the unread, marked read first, then forwarded
            b.call("email", "search_messages", "unread", is_unread=True, from_address=p.last)
            b.call("email", "get_message", message_id=target)
            b.call("email", "modify_labels", message_id=target, remove_label_ids=["UNREAD"])
            b.call("email", "forward_message", message_id=target, to=[colleague.email], body=f"For you: {ask}?")

    @staticmethod
    def _checks(b: TaskBuilder, x: Company, colleague: Staff, target: str, keyword: str) -> None:
        """Forwarded (the main check), marked read, and the other mail left alone: each of the last two weighs
        more than 1 − the pass mark, so skipping one or acting on a distractor fails the task."""
        p = x.contacts[0]
        b.check(
            "forwarded",
            0.4,
            f"{p.name}'s email is forwarded to {colleague.name}.",
            {
                "kind": "record_exists",
                "service": "email",
                "table": "messages",
                "where": {
                    "mailbox": USER.email,
                    "label_ids": {"contains": "SENT"},
                    "date": {"gte": b.now_iso},
                    "to": {"contains": colleague.email},
                    "body": {"contains": x.email(p)},
                    "subject": {"regex": f"^Fwd: .*{rx(keyword)}", "case_insensitive": True},
                },
            },
        )
        b.check(
            "marked_read",
            0.3,
            f"{p.name}'s email is marked as read.",
            {
                "kind": "record_fields",
                "service": "email",
                "table": "messages",
                "id": target,
                "fields": {"label_ids": {"not": {"contains": "UNREAD"}}},
            },
        )
        b.check(
            "other_mail_untouched",
            0.3,
            "The other emails that look related (and, hard, the colleague's own email) are left as they were.",
            {"kind": "records_unchanged", "service": "email", "table": "messages", "ids": list(b.distractors)},
            ("forwarded",),
        )
        b.forbid_call(
            "answered_customer",
            "Answering the customer instead of letting the colleague do it.",
            "email",
            "reply_to_message",
            {"message_id": target},
            {"message_id": target, "body": "Good question, I think the answer is yes."},
        )
