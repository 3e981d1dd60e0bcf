"""A resource family on docs: answer a question that one document answers ('what does the offsite plan give as
the venue?'), from one of the user's own Markdown or text files with ``--from``, else from stand-in documents.
The request names the document and what is asked, never the answer; the other documents that state the same
thing differently are the distractors."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import DISTRACTORS, REPORT, Json, TaskBuilder
from coworkenv.synth.generate.families.kit.names import USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.resources_common import ResourceFamily, grounding, place
from coworkenv.synth.generate.families.kit.resources_facts import Fact, facts
from coworkenv.synth.generate.resources.loader import key_of
from coworkenv.synth.generate.resources.model import Document, ResourceSet

PLACES = ("Harbour Hall", "The Glasshouse", "Fern Lodge", "Northgate Studio", "Millbrook Barn", "Quayside Rooms")
VENDORS = ("Copperleaf Catering", "Greenfork Kitchen", "Saltbox Foods", "Amberline Events", "Tidewater Supply")
PLANS = ("Offsite plan", "Kick-off plan", "Summer party plan", "Customer day plan", "Training week plan")


@register_family
class DocumentQuestion(ResourceFamily):
    name = "document-question"
    scenario = "answering a question from what a document says"
    capabilities = (REPORT, DISTRACTORS)
    service_options = (("docs",),)
    distractors = "other documents stating the same kind of fact with other values"

    @classmethod
    def fits(cls, rs: ResourceSet) -> bool:
        return any(facts(d) for d in rs.documents)

    def stand_in(self, b: TaskBuilder) -> ResourceSet:
        titles = b.rng.sample(PLANS, 2 + b.targets)
        venues = b.rng.sample(PLACES, len(titles))
        caterers = b.rng.sample(VENDORS, len(titles))
        docs = []
        for title, venue, caterer in zip(titles, venues, caterers, strict=True):
            owner = b.names.person().name
            budget = b.rng.randrange(20, 160) * 100
            text = (
                f"# {title}\n\nOwner: {owner}\n\n- Venue: {venue}\n- Budget: ${budget:,}\n- Catering: {caterer}\n\n"
                f"{b.book.internal_mail()[1]}\n"
            )
            path = f"{title.lower().replace(' ', '-')}.md"
            docs.append(Document(key_of(path), path, path, title, text))
        return ResourceSet("stand-in", documents=tuple(docs))

    def build(self, b: TaskBuilder) -> str:
        rs, _ = grounding(self, b)
        options = [f for d in rs.documents for f in facts(d)]
        fact = options[b.rng.randrange(len(options))]
        placed = place(b, rs, fact.document.id)
        doc_id = placed.documents[fact.document.id]
        others = [f for d in rs.documents if d.id != fact.document.id and d.id in placed.documents for f in facts(d)]
        same = [f for f in others if f.key.casefold() == fact.key.casefold() and _differs(f, fact)]
        b.distract(*(placed.documents[f.document.id] for f in same))
        same += self._decoys(b, fact, 1 if b.difficulty == "easy" else 2)
        self._answer(b, fact, doc_id, same)
        b.may_name += [fact.document.title, fact.key]
        ask = Ask(
            steps=["look up what our '{title}' document gives as the {key}"],
            context="Someone asked me and I don't have it to hand. I mean the current document, not an older copy.",
            report="tell me what it says",
            topic="the {key} in {title}",
        )
        backdrop(b)
        return compose(b, ask, title=fact.document.title, key=fact.key.lower())

    @staticmethod
    def _decoys(b: TaskBuilder, fact: Fact, n: int) -> list[Fact]:
        """Older copies of the document (titled with an earlier year) that give another value for the fact."""
        out = []
        pool = [p for p in (*PLACES, *VENDORS) if p.casefold() != fact.answer.casefold()]
        for k, other in enumerate(b.rng.sample(pool, n)):
            if fact.cents is not None:
                cents = fact.cents + b.pick(-1, 1) * (k + 1) * max(100, fact.cents // 100 * b.rng.randint(10, 30))
                cents = cents if cents > 0 else fact.cents * (k + 2)
                answer = f"${cents / 100:,.2f}".replace(".00", "")
            else:
                cents, answer = None, other
            value = fact.value.replace(fact.answer, answer)
            text = fact.document.text.replace(f"{fact.key}: {fact.value}", f"{fact.key}: {value}", 1)
            if text == fact.document.text:
                text = f"{text.rstrip()}\n\n{fact.key}: {value}\n"
            title = f"{fact.document.title} ({b.now.year - 1 - k})"
            record: Json = {"id": b.uid("doc_", title), "title": title, "content": text, "owner": USER.email}
            record |= {"workspace_role": "editor", "revision": 1, "created_at": b.ago(days=370 + 365 * k)}
            b.add("docs", "documents", record)
            b.distract(record["id"])
            decoy = Document(record["id"], fact.document.path, fact.document.name, title, text)
            out.append(Fact(decoy, fact.key, value, answer, cents))
        return out

    @staticmethod
    def _answer(b: TaskBuilder, fact: Fact, doc_id: str, same: list[Fact]) -> None:
        query = " ".join(fact.document.title.split()[:3])
        b.may_name.append(query)
        b.call("docs", "search_documents", "found", query=query)
        b.call("docs", "get_document", document_id=doc_id)
        b.say(f"I checked the current '{fact.document.title}': it gives the {fact.key.lower()} as \"{fact.answer}\".")
        with b.alternative():  # the user's own documents listed, the one asked about opened by its id
            b.call("docs", "search_documents", owner="me", page_size=100)
            b.call("docs", "get_document", document_id=doc_id)
            b.say(f"Going by the latest '{fact.document.title}', the {fact.key.lower()} is \"{fact.answer}\".")
        if fact.cents is not None:
            wrong = sorted({f.cents for f in same if f.cents is not None and f.cents != fact.cents})
            check = {"kind": "said_value", "value": fact.cents, "cents": True, "wrong_values": wrong}
        else:
            texts = sorted({f.answer for f in same if f.answer.casefold() != fact.answer.casefold()})
            check = {"kind": "said_contains", "text": fact.answer, "wrong_values": texts}
        b.check("answer", 1.0, f"The agent says the {fact.key.lower()} is {fact.answer}.", check)
        b.forbid_call(
            "edited_document",
            "Changing the document instead of only reading it.",
            "docs",
            "edit_document",
            {"document_id": doc_id},
            {"document_id": doc_id, "operation": "append", "text": f"{fact.key}: TBC"},
        )


def _differs(a: Fact, b: Fact) -> bool:
    if a.cents is not None or b.cents is not None:
        return a.cents != b.cents
    return a.answer.casefold() != b.answer.casefold()
