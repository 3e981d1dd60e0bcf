"""The multi-turn family on a docs proposal: the agent writes a summary line, then the user changes the
figures in the document and asks for the summary fixed and posted (see
:mod:`coworkenv.synth.generate.families.kit.multiturn` for what the multi-turn families share)."""

from __future__ import annotations

from dataclasses import dataclass

from coworkenv.synth.generate.families.kit.backdrop import backdrop
from coworkenv.synth.generate.families.kit.base import (
    CLARIFY,
    COMMS,
    DISTRACTORS,
    MULTISTEP,
    Family,
    Json,
    TaskBuilder,
    money,
    money_rx,
)
from coworkenv.synth.generate.families.kit.multiturn import (
    FINISHED,
    PERSONA,
    PROJECTS,
    TEAMS,
    Workspace,
    day_rx,
    make_doc,
    seed_chat,
    workspace,
)
from coworkenv.synth.generate.families.kit.names import USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family


@dataclass(frozen=True)
class _Budget:
    """One task's proposal: its project and document, the channel for the figures, the total before and after
    the user's edit, and the approval date before and after (spoken)."""

    project: str
    doc_id: str
    channel: str
    chan_id: str
    old: int
    new: int
    d_old: str
    d_new: str


def _proposal(name: str, total: int, due: str) -> str:
    return (
        f"# {name} budget proposal\n\nOwner: {USER.name}.\n\n## Summary\n\n## Budget\n\n"
        f"- Engineering: {money(total * 6 // 10)}\n- Vendors: {money(total - total * 6 // 10)}\n"
        f"- Total requested: {money(total)}\n\n## Timeline\n\n- Approval needed by {due}\n"
    )


@register_family
class DocsReviseAfterFeedback(Family):
    name = "docs-revise-after-feedback"
    scenario = "revising a proposal after the user changes its figures"
    capabilities = (MULTISTEP, CLARIFY, COMMS, DISTRACTORS)
    service_options = (("docs", "chat"),)
    distractors = "last year's proposal for the same project and other projects' proposals with other totals"

    def build(self, b: TaskBuilder) -> str:
        p = self._seed(b)
        summary_old = f"Total requested: {money(p.old)}" + (f", approval by {p.d_old}." if b.hard else ".")
        self._user_turn(b, p)
        self._reference(b, p, summary_old)
        self._checks(b, p, summary_old)
        b.may_name.append(p.channel)
        also = " and the approval date" if b.hard else ""
        ask = Ask(
            steps=(
                b.pick(
                    "add a one-line summary to the Summary section of the {project} budget proposal with the total "
                    "requested" + also + ", as the Budget section has it",
                    "write one line in the empty Summary section of the {project} budget proposal giving the total "
                    "requested" + also + " from the doc",
                    "fill in the Summary of the {project} budget proposal: one line with the total requested" + also,
                ),
            ),
            context=b.pick(
                "The {project} budget proposal still has an empty Summary section.",
                "The {project} proposal is nearly ready for review.",
                "",
            ),
            report=b.pick("tell me when it's ready", "let me know when it's done", "ping me once it's in"),
            topic="{project} budget proposal",
        )
        backdrop(b)
        return compose(b, ask, project=p.project)

    @staticmethod
    def _reference(b: TaskBuilder, p: _Budget, summary_old: str) -> None:
        """Write the summary from the doc's figures, then (after the user's change) rewrite it and post it."""
        summary_new = f"Total requested: {money(p.new)}" + (f", approval by {p.d_new}." if b.hard else ".")
        b.call("docs", "search_documents", query=f"{p.project} budget")
        b.call("docs", "get_document", document_id=p.doc_id)
        b.call(
            "docs",
            "edit_document",
            document_id=p.doc_id,
            operation="append_to_section",
            heading="Summary",
            text=summary_old,
        )
        b.say(f"I added the summary line to the {p.project} budget proposal: {summary_old} It's ready for review.")
        b.call("docs", "get_document", document_id=p.doc_id)
        b.call("docs", "edit_document", document_id=p.doc_id, operation="replace", find=summary_old, text=summary_new)
        post = f"{p.project} budget proposal is final. {summary_new}"
        b.call("chat", "post_message", channel=f"#{p.channel}", text=post)
        b.say(f"Summary updated to your new figures and posted in #{p.channel}: {summary_new}")
        with b.alternative():  # the proposal found by project name; the summary inserted under its heading
            b.call("docs", "search_documents", "found", query=p.project)
            b.call("docs", "get_document", document_id=p.doc_id)
            b.call("docs", "edit_document", document_id=p.doc_id, operation="insert_after_heading",
                   heading="Summary", text=summary_old)  # fmt: skip
            b.say(f"Done: {summary_old}")
            b.call("docs", "get_document", document_id=p.doc_id)
            b.call("docs", "edit_document", document_id=p.doc_id, operation="replace", find=summary_old,
                   text=summary_new)  # fmt: skip
            b.call("chat", "post_message", channel=f"#{p.channel}", text=f"{summary_new} ({p.project}, final)")
            b.say(f"Updated and posted: {summary_new}")

    @staticmethod
    def _seed(b: TaskBuilder) -> _Budget:
        """People, channels, the proposal, and as distractors last year's proposal and other projects'."""
        ws = workspace(b, 2)
        for u in ws.docs_users():
            b.add("docs", "users", u)
        projects = b.rng.sample(PROJECTS, 1 + b.n_distractors())
        project, others = projects[0], projects[1:]
        team = b.rng.choice(TEAMS)
        channel = f"{team}-budget"
        chan_ids = seed_chat(b, ws, [channel, team, "general"])
        old = b.rng.randrange(80, 400) * 10_000
        new = old - b.rng.randrange(5, 40) * 10_000
        due_old = b.ahead(days=b.rng.randrange(10, 20))
        due_new = b.ahead(days=b.rng.randrange(25, 40))
        d_old, d_new = b.spoken_day(due_old), b.spoken_day(due_new)
        doc_id = b.uid("doc_", project + " budget")
        make_doc(b, doc_id, f"{project} budget proposal", _proposal(project, old, d_old), USER.email, 3)
        last = b.uid("doc_", project + " budget last year")
        prev_total = old + b.rng.randrange(5, 30) * 10_000
        title = f"{project} budget proposal (last year)"
        make_doc(b, last, title, _proposal(project, prev_total, d_old), USER.email, 300)
        b.distract(last)
        for name in others:
            other = b.uid("doc_", name + " budget")
            total = b.rng.randrange(80, 400) * 10_000
            make_doc(b, other, f"{name} budget proposal", _proposal(name, total, d_old), ws.staff[-1].email, 20)
            b.distract(other)
        return _Budget(project, doc_id, channel, chan_ids[channel], old, new, d_old, d_new)

    @staticmethod
    def _user_turn(b: TaskBuilder, p: _Budget) -> None:
        """When the agent finishes its first turn, the user changes the total (hard: and the date) itself."""

        def replace(find: str, text: str) -> Json:
            arguments = {"document_id": p.doc_id, "operation": "replace", "find": find, "text": text}
            return {"service": "docs", "tool": "edit_document", "arguments": arguments}

        edits = [replace(f"- Total requested: {money(p.old)}", f"- Total requested: {money(p.new)}")]
        if b.hard:
            edits.append(replace(f"- Approval needed by {p.d_old}", f"- Approval needed by {p.d_new}"))
        what = "the total and the approval date" if b.hard else "the total"
        message = (
            f"Thanks. Finance just came back and I've changed {what} in the Budget section of the doc myself. "
            f"Please fix your summary line to match, then post the final figures in #{p.channel}."
        )
        b.user = {"persona": PERSONA, "turns": [{"message": message, "when": FINISHED, "edits": edits}]}

    @staticmethod
    def _checks(b: TaskBuilder, p: _Budget, summary_old: str) -> None:
        """The summary follows the user's figures (0.3), they are posted (0.3), the old total is gone (0.1);
        the other proposals are untouched (0.3: more than the pass mark leaves, so editing one fails)."""
        new_rx, old_rx = money_rx(p.new), money_rx(p.old)
        figures = f"(?=[\\s\\S]*{new_rx})" + (f"(?=[\\s\\S]*{day_rx(p.d_new)})" if b.hard else "")
        both = f"^(?=[\\s\\S]*## Summary[^#]*?{new_rx})(?=[\\s\\S]*## Budget[^#]*{new_rx})"
        b.check(
            "summary_follows_edit",
            0.3,
            "The proposal's summary states the user's new figures (they appear in the Summary section as well as "
            "in the Budget section).",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": p.doc_id,
             "fields": {"content": {"regex": both}}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "posted_new_figures",
            0.3,
            f"The final figures are posted in #{p.channel}.",
            {"kind": "record_exists", "service": "chat", "table": "messages",
             "where": {"channel_id": p.chan_id, "user_id": Workspace.chat_id(USER), "text": {"regex": f"^{figures}"}}},
            after_turn=1,
        )  # fmt: skip
        b.check(
            "old_total_gone",
            0.1,
            "The superseded total appears nowhere in the proposal, and the user's own edit is kept.",
            {"kind": "record_fields", "service": "docs", "table": "documents", "id": p.doc_id,
             "fields": {"content": {"regex": f"^(?![\\s\\S]*{old_rx})[\\s\\S]*- Total requested: "}}},
            ("summary_follows_edit",),
        )  # fmt: skip
        b.check(
            "other_proposals_untouched",
            0.3,
            "Last year's proposal and the other projects' proposals are unchanged.",
            {"kind": "records_unchanged", "service": "docs", "table": "documents", "ids": list(b.distractors)},
            ("summary_follows_edit",),
        )
        b.forbid(
            "posted_old_total",
            "Posting the superseded total after the user changed it.",
            {"kind": "tool_called", "service": "chat", "tool": "post_message", "outcome": "any",
             "arguments": {"text": {"regex": old_rx}}},
            {"service": "chat", "tool": "post_message",
             "arguments": {"channel": f"#{p.channel}", "text": f"{p.project}: {summary_old}"}},
        )  # fmt: skip
