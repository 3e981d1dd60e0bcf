"""Code repository, helpdesk and chat: main's CI is red; open an incident ticket naming the failing test and post
in the engineering channel which test fails and which commit broke it."""

from __future__ import annotations

from coworkenv.synth.generate.families.kit.base import COMMS, CROSS, DISTRACTORS, Family, TaskBuilder, rx
from coworkenv.synth.generate.families.kit.multiturn import Workspace, seed_chat, workspace
from coworkenv.synth.generate.families.kit.names import AGENTS, USER
from coworkenv.synth.generate.families.kit.phrasing import Ask, compose
from coworkenv.synth.generate.families.kit.registry import register_family
from coworkenv.synth.generate.families.kit.repo_common import MODULES, RedMain, Repo, red_main, short_name


@register_family
class CIFailureTicketAndChat(Family):
    name = "repo-ci-failure-ticket-chat"
    scenario = "a CI failure that becomes an incident ticket and a chat post"
    capabilities = (CROSS, COMMS, DISTRACTORS)
    service_options = (("repo", "tickets", "chat"),)
    distractors = (
        "the later red commits on main (inherited failures); an open pull request's own red run; the other chat "
        "channels; an unrelated open helpdesk ticket"
    )

    def build(self, b: TaskBuilder) -> str:
        red = red_main(b, Repo(b), b.rng.sample(MODULES, 4 + b.targets))
        test = short_name(red.test)
        channels = self._seed(b)
        self._reference(b, red, test)
        self._checks(b, red, test, channels)
        return compose(b, self._ask(b))

    @staticmethod
    def _seed(b: TaskBuilder) -> dict[str, str]:
        """The helpdesk's agents and an unrelated open ticket, and the chat channels; returns channel name → id."""
        for s in (USER, *AGENTS):
            b.add("tickets", "users", {"id": s.key, "name": s.name, "email": s.email, "role": "agent"})
        when = b.ago(3)
        old = {
            "id": b.uid("tkt_"),
            "subject": "VPN drops every hour",
            "description": "Since the router swap.",
            "requester_id": AGENTS[0].key,
        }
        b.distract(b.add("tickets", "tickets", {**old, "status": "open", "created_at": when, "updated_at": when})["id"])
        return seed_chat(b, workspace(b, 1), ["engineering", "general", "random"])

    @staticmethod
    def _reference(b: TaskBuilder, red: RedMain, test: str) -> None:
        b.call("repo", "list_ci_runs", "runs", branch_name="main", status="failure")
        b.call("repo", "get_ci_run_log", run_id=red.latest_run)
        b.call("repo", "list_commits", ref="main")
        b.call(
            "tickets",
            "create_ticket",
            subject=f"CI red on main: {test} fails",
            description=f"{red.test} fails on main since commit {red.breaking}.",
            requester_id=USER.key,
            priority="high",
            type="incident",
        )
        post = f"Heads up: main is red. {test} fails since commit {red.breaking}. Incident ticket opened."
        b.call("chat", "post_message", channel="#engineering", text=post)
        b.say(f"Opened an incident ticket and posted in #engineering: {test} broke in {red.breaking}.")
        with b.alternative():  # the chat post first, then the ticket
            b.call("repo", "list_ci_runs", branch_name="main")
            b.call("repo", "get_ci_run", run_id=red.first_run)
            b.call("chat", "post_message", channel="#engineering", text=f"CI on main: {test} broken by {red.breaking}.")
            b.call(
                "tickets",
                "create_ticket",
                subject=f"{test} failing on main",
                description=f"Broken by {red.breaking}.",
                requester_id=USER.key,
                type="incident",
            )
            b.say(f"Posted in #engineering and opened a ticket: {test}, broken by {red.breaking}.")

    @staticmethod
    def _checks(b: TaskBuilder, red: RedMain, test: str, channels: dict[str, str]) -> None:
        rx_test = {"regex": rx(test)}
        b.check(
            "ticket_opened",
            0.35,
            f"A helpdesk ticket names the failing test {test}.",
            {
                "kind": "record_exists",
                "service": "tickets",
                "table": "tickets",
                "where": {"subject|description": rx_test},
            },
        )
        mine = {"channel_id": channels["engineering"], "user_id": Workspace.chat_id(USER)}
        b.check(
            "posted_test",
            0.35,
            f"A post in #engineering names {test}.",
            {"kind": "record_exists", "service": "chat", "table": "messages", "where": {**mine, "text": rx_test}},
        )
        b.check(
            "posted_commit",
            0.3,
            f"A post in #engineering names the commit that broke it, {red.breaking}.",
            {
                "kind": "record_exists",
                "service": "chat",
                "table": "messages",
                "where": {**mine, "text": {"regex": rx(red.breaking)}},
            },
            ("posted_test",),
        )
        b.forbid_call(
            "changed_code",
            "Reverting a commit when asked only to report the failure.",
            "repo",
            "revert_commit",
            {},
            {"commit_id": red.breaking, "branch_name": "main"},
        )

    @staticmethod
    def _ask(b: TaskBuilder) -> Ask:
        return Ask(
            steps=(
                b.pick(
                    "find out which test is failing on main and which commit broke it",
                    "work out what broke main's CI: the failing test and the commit behind it",
                ),
                b.pick(
                    "open an incident ticket in the helpdesk naming the test",
                    "log it as a high-priority incident ticket (test name in it)",
                ),
                b.pick("post the test and the commit in #engineering", "let #engineering know the test and the commit"),
            ),
            avoid=b.pick("Don't revert anything yourself.", "No code changes."),
            topic="main is red",
        )
