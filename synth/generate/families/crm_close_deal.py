"""CRM: closing a deal the customer decided on (won or lost, as their mail says)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import CROSS, DISTRACTORS, MULTISTEP, Family, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.crm_common import deal_amount, opportunity, others_unchanged
from coworkenv.synth.generate.families.kit.names import Company
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.seeds import Cast, mail
from coworkenv.synth.generate.families.kit.texts import LOSS_GIST, LOSS_REASONS

WON_WORDS = r"accept|agree|signed|go(?:ing)? ahead|closed.?won|\bwon\b(?!['’])|confirm"
LOST_WORDS = r"declin|won'?t|not (?:going to )?renew|lost|churn|leav|reject|no longer"
"""What a logged call or email says about a renewal won or lost (any case)."""


@dataclass
class _Renewal:
    """A renewal the customer decided on: won or lost (with the reason), and how we heard (the email's id)."""

    cast: Cast
    company: Company
    deal: Json
    decoys: list[Json]
    won: bool
    reason: str
    message: str | None
    """The id of the customer's email with the decision; None: they called."""

    @property
    def kind(self) -> str:
        return "call" if self.message is None else "email"


@register_family
class CloseDeal(Family):
    name = "crm-close-deal"
    scenario = "sales pipeline update"
    capabilities = (DISTRACTORS, MULTISTEP, CROSS)
    service_options = (("crm",), ("email", "crm"))
    distractors = (
        "another open deal of the same account (an add-on); another customer's renewal in the same stage; "
        "(email) that customer's email with the opposite decision; (hard) last year's lost renewal"
    )

    def build(self, b: TaskBuilder) -> str:
        r = self._seed(b)
        self._reference(b, r)
        self._checks(b, r.cast, r.company, r.deal, r.decoys, r.won, r.kind, r.reason)
        backdrop(b)
        return self._request(b, r)

    def _seed(self, b: TaskBuilder) -> _Renewal:
        """The account, its renewal and the decoy deals; (email) the customer's decision and decoy emails."""
        cast = Cast(b)
        x = cast.company(contacts=1)
        rivals = [cast.company() for _ in range(1 if b.difficulty == "easy" else 2)]
        cast.crm()
        won = b.rng.random() < 0.6
        reason = b.rng.choice(LOSS_REASONS)
        deal, decoys = self._deals(b, cast, x, rivals)
        message = None
        if "email" in b.services:
            cast.email(colleagues=False)
            message = self._emails(b, cast, x, rivals, won, reason)
        return _Renewal(cast, x, deal, decoys, won, reason, message)

    def _reference(self, b: TaskBuilder, r: _Renewal) -> None:
        x = r.company
        b.call("crm", "search_opportunities", "deals", query=x.name.split()[0], is_open=True)
        b.call("crm", "search_contacts", "who", query=x.contacts[0].last)
        if r.message is not None:
            b.call("email", "search_messages", "mails", from_address=x.domain)
            b.call("email", "get_message", message_id=r.message)
        self._close(b, r.cast, x, r.deal, r.won, r.reason, r.kind)
        with b.alternative():  # from the account to its deals; the activity logged before the deal is closed
            b.call("crm", "search_accounts", "acct", query=x.domain)
            b.call("crm", "get_account", account_id={"$ref": "acct.items.0.id"})
            b.call("crm", "search_opportunities", account_id=r.cast.acc(x), stage=[r.deal["stage"]])
            if r.message is not None:
                b.call("email", "search_messages", subject="renewal", from_address=x.contacts[0].last)
            self._close(b, r.cast, x, r.deal, r.won, r.reason, r.kind, log_first=True)

    @staticmethod
    def _request(b: TaskBuilder, r: _Renewal) -> str:
        x, p = r.company, r.company.contacts[0]
        if r.message is not None:
            ask = Ask(
                steps=(
                    b.pick(
                        "update the deal in the CRM to match",
                        "record their decision on the renewal in the CRM",
                        "close out the renewal in the CRM the way they decided",
                    ),
                    b.pick(
                        "log the email on it", "log their email on the deal", "attach a log of the email to the deal"
                    ),
                ),
                context=b.pick(
                    "{first} from {company} replied about the renewal.",
                    "There's an email from {first} at {company} about their renewal.",
                    "{company} got back to us by email about the renewal quote.",
                ),
                avoid=b.pick("Leave the other deals alone.", "Don't touch any other opportunity.", ""),
                topic="{company} renewal",
            )
            return compose(b, ask, first=p.first, company=x.name)
        said = "they accept the renewal quote as sent" if r.won else f"they won't renew ({r.reason.lower()})"
        ask = Ask(
            steps=(
                b.pick(
                    "update the renewal in the CRM", "close out the renewal accordingly", "record it on the renewal"
                ),
                b.pick("log the call on the deal", "log the call", "add a call activity to the deal"),
            ),
            context=b.pick(
                "{first} from {company} just called: {said}.",
                "I spoke to {person} at {company} and {said}.",
                "Call with {person} ({company}) just now: {said}.",
            ),
            avoid=b.pick("Leave the other deals alone.", "Nothing else in the pipeline should change.", ""),
            topic="{company} renewal",
        )
        return compose(b, ask, first=p.first, person=p.name, company=x.name, said=said)

    @staticmethod
    def _deals(b: TaskBuilder, cast: Cast, x: Company, rivals: list[Company]) -> tuple[Json, list[Json]]:
        """The renewal to close, and the decoys: an add-on of the same account, rivals' renewals in the same
        stage; (hard) last year's lost renewal."""
        year = b.now.year
        deal = opportunity(b, cast, x, f"{year} renewal", b.pick("proposal", "negotiation"), deal_amount(b))
        decoys = []
        if b.difficulty != "easy":
            decoys.append(
                opportunity(b, cast, x, b.pick("Analytics add-on", "Seat expansion"), "proposal", deal_amount(b))
            )
        for r in rivals:
            decoys.append(opportunity(b, cast, r, f"{year} renewal", deal["stage"], deal_amount(b)))
        if b.hard:
            opportunity(b, cast, x, f"{year - 1} renewal", "closed_lost", deal_amount(b), b.rng.choice(LOSS_REASONS))
        b.distract(*(d["id"] for d in decoys))
        return deal, decoys

    @staticmethod
    def _close(
        b: TaskBuilder, cast: Cast, x: Company, deal: Json, won: bool, reason: str, kind: str, log_first: bool = False
    ) -> None:
        """The writes: close the renewal, log the call or email on it (or log first, then close)."""
        p = x.contacts[0]
        if not log_first:
            CloseDeal._update(b, deal, won, reason)
        outcome = "accepted the renewal quote" if won else f"declined the renewal: {reason.lower()}"
        b.call(
            "crm",
            "log_activity",
            type=kind,
            subject=f"{p.first} {outcome.split(':')[0]}",
            body=f"{p.name} {outcome}.",
            opportunity_id=deal["id"],
            contact_id=cast.con(p),
        )
        if log_first:
            CloseDeal._update(b, deal, won, reason)

    @staticmethod
    def _update(b: TaskBuilder, deal: Json, won: bool, reason: str) -> None:
        if won:
            b.call("crm", "update_opportunity", opportunity_id=deal["id"], stage="closed_won")
        else:
            b.call("crm", "update_opportunity", opportunity_id=deal["id"], stage="closed_lost", loss_reason=reason)

    @staticmethod
    def _checks(
        b: TaskBuilder, cast: Cast, x: Company, deal: Json, decoys: list[Json], won: bool, kind: str, reason: str
    ) -> None:
        """The renewal closed the right way (lost: with the reason the customer gave), the activity logged
        saying how it ended (and linked to the contact), every other deal unchanged (enough weight that touching
        one fails the task); closing a decoy is forbidden."""
        p = x.contacts[0]
        fields: Json = {"stage": "closed_won", "amount": deal["amount"]} if won else {"stage": "closed_lost"}
        if not won:
            fields["loss_reason"] = {"regex": LOSS_GIST[reason], "case_insensitive": True}
        outcome = WON_WORDS if won else f"{LOST_WORDS}|{LOSS_GIST[reason]}"
        b.check(
            "deal_closed",
            0.35,
            f"The {x.name} renewal is closed {'won' if won else 'lost'}.",
            {"kind": "record_fields", "service": "crm", "table": "opportunities", "id": deal["id"], "fields": fields},
        )
        said = {
            "type": kind,
            "opportunity_id": deal["id"],
            "subject|body": {"regex": outcome, "case_insensitive": True},
        }
        b.check(
            "activity_logged",
            0.3,
            f"The {kind} is logged on the renewal, saying how it ended.",
            {"kind": "record_exists", "service": "crm", "table": "activities", "where": said},
        )
        b.check(
            "activity_names_contact",
            0.05,
            f"The logged {kind} is linked to {p.name}.",
            {
                "kind": "record_exists",
                "service": "crm",
                "table": "activities",
                "where": {**said, "contact_id": cast.con(p)},
            },
        )
        others_unchanged(b, {"id": {"not": {"equals": deal["id"]}}}, ("deal_closed",))
        b.forbid_call(
            "closed_wrong_deal",
            "Closing a deal nobody decided on.",
            "crm",
            "update_opportunity",
            {
                "opportunity_id": {"in": [d["id"] for d in decoys]},
                "stage": {"in": ["closed_won", "closed_lost"]},
            },
            {"opportunity_id": decoys[0]["id"], "stage": "closed_won"},
        )

    @staticmethod
    def _emails(b: TaskBuilder, cast: Cast, x: Company, rivals: list[Company], won: bool, reason: str) -> str:
        p = x.contacts[0]
        yes = "we're happy to go ahead with the renewal as quoted. Please send over the paperwork."
        no = f"we have decided not to renew this year. {reason}."
        body = f"Hi Dana,\n\nThanks for the renewal quote. After discussing it internally, {yes if won else no}\n\nBest,\n{p.name}"
        target = mail(b, (p.name, x.email(p)), "Re: Your renewal quote", body, b.ago(hours=b.rng.randint(1, 20)))
        mail(
            b,
            (p.name, x.email(p)),
            "Invoice copy",
            f"Hi Dana, could you resend last month's invoice?\n\n{p.first}",
            b.ago(days=b.rng.randint(8, 20)),
            unread=False,
        )
        r = rivals[0]
        q = r.contacts[0]
        other = f"Hi Dana,\n\nAbout the renewal: {no if won else yes}\n\n{q.name}"
        decoy = mail(b, (q.name, r.email(q)), "Re: Your renewal quote", other, b.ago(hours=b.rng.randint(2, 30)))
        b.distract(decoy["id"])
        return str(target["id"])
