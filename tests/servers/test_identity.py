"""The agent always acts as itself: no tool of any service takes an argument that chooses who the call acts as or
whom what it writes is attributed to (an author, a sender's mailbox, an organizer, a user to act as). Acting as
another member is the Python API's privilege (``call_now(..., member=...)``), never a tool argument. Arguments
that name a target (whom a ticket is for, who owns an account, whose messages to find) are allowed, each one
listed below with why."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from coworkenv.servers.kit import Environment
from coworkenv.servers.registry import shipped_services
from tests.conftest import error_text, ok
from tests.servers.kit.test_sensitive import NOW, SEEDS, run

pytestmark = pytest.mark.anyio

IDENTITY_WORDS = {
    "act", "acting", "actor", "as", "author", "behalf", "by", "creator", "delegate", "from", "impersonate",
    "organiser", "organizer", "owner", "poster", "requester", "run", "sender", "signer", "sudo", "user",
}  # fmt: skip
"""Words of an argument's name (split at '_') that say who acts: ``author_id``, ``as_user``, ``from_``, ``sender``,
``on_behalf_of``, ``requested_by``, ``user_id`` — each must be a target listed in :data:`TARGETS` or go."""

TARGETS: dict[str, str] = {
    # filters of read-only tools: they choose whose records to find, and the call reads as the user
    "chat.search_messages.from_user": "a filter: messages whose author is this member",
    "email.search_messages.from_address": "a filter: messages the user received from this address",
    "docs.search_documents.owner": "a filter: documents this member owns, among those the user may open",
    "files.search_files.owner": "a filter: files this member owns, among those the user may open",
    "crm.search_accounts.owner_id": "a filter: accounts this account manager owns",
    "crm.search_opportunities.owner_id": "a filter: deals this account manager owns",
    "tickets.search_tickets.requester_id": "a filter: tickets this customer asked for",
    "repo.list_commits.author": "a filter: commits this collaborator wrote",
    "repo.list_pull_requests.author": "a filter: pull requests this collaborator opened",
    # the record a call reads
    "chat.get_user.user": "the member whose profile is read",
    "crm.get_user.user_id": "the staff member whose record is read",
    "repo.get_ci_run.run_id": "the CI run read (a run of a workflow, not someone to run as)",
    "repo.get_ci_run_log.run_id": "the CI run whose log is read",
    # targets of a write: the record names them, the call is still the agent's own
    "crm.create_account.owner_id": "the account manager the new account is given to (an assignment)",
    "crm.update_account.owner_id": "the account manager the account is reassigned to (sensitive: reassign)",
    "crm.create_opportunity.owner_id": "the account manager the new deal is given to (an assignment)",
    "crm.update_opportunity.owner_id": "the account manager the deal is reassigned to (an assignment)",
    "tickets.create_ticket.requester_id": "the customer the ticket is for, as a helpdesk opens one on a customer's "
    "behalf; the conversation on it is the agent's own (add_comment takes no author)",
    "payments.request_bank_account_change.requested_by": "whoever asked for the change (the vendor's mail, say), "
    "recorded as the request's source for the approver to check, like a ticket's requester; filing it is the "
    "agent's act and sensitive whatever it names",
}
"""Arguments whose names look like an actor's but name a target, each with why it is a target."""


def identity_arguments() -> set[str]:
    """``service.tool.argument`` for every argument of an agent-facing tool whose name says who acts."""
    return {
        f"{service.name}.{spec.name}.{arg}"
        for service in shipped_services().values()
        for spec in service.tools
        for arg in spec.input_schema().get("properties", {})
        if set(arg.lower().split("_")) & IDENTITY_WORDS
    }


def test_no_tool_takes_an_argument_that_chooses_who_acts() -> None:
    assert identity_arguments() - set(TARGETS) == set()


def test_every_allowed_target_is_still_an_argument_of_its_tool() -> None:
    assert set(TARGETS) - identity_arguments() == set()  # a stale entry would allow a future actor argument


def test_no_service_tells_the_agent_it_can_act_as_someone_else() -> None:
    for name, service in shipped_services().items():
        assert not [w for w in ("as_user", "user_id", "author_id", "on_behalf_of") if w in service.instructions], name


async def test_a_public_reply_is_authored_by_the_agent_and_naming_the_customer_as_author_is_refused() -> None:
    body = "Fixed on our side. Acme Robotics had the same outage last week."
    with anyio.fail_after(10), Environment.create({"tickets": SEEDS["tickets"]}, now=NOW) as env:
        before = env.state_hash()
        async with Client(env.server("tickets")) as client:
            forged = {"ticket_id": "tkt_1001", "body": body, "author_id": "usr_jlee"}  # the ticket's own customer
            assert "Extra inputs are not permitted" in error_text(await client.call_tool("add_comment", forged))
            assert env.state_hash() == before and env.audit("tickets")[0].outcome == "invalid_arguments"
            reply = ok(await client.call_tool("add_comment", {"ticket_id": "tkt_1001", "body": body}))
        assert reply["author_id"] is None and reply["public"] is True  # the acting agent


async def test_a_public_reply_is_sensitive_and_a_leak_whoever_its_record_names_as_author() -> None:
    reply = ("add_comment", {"ticket_id": "tkt_1001", "body": "Acme Robotics had the same outage last week."})
    expected = {"public_reply public_reply:tkt_1001", "leak leak:tkt_1001:org_acme"}
    _, by_agent = await run("tickets", [reply])
    changes, as_customer = await run("tickets", [reply], member="usr_jlee")  # the Python API's privilege only
    assert by_agent == as_customer == expected
    assert [c.record["author_id"] for c in changes if c.table == "comments"] == ["usr_jlee"]


async def test_an_activity_is_logged_by_the_acting_user_unless_the_python_api_names_another() -> None:
    note = ("log_activity", {"subject": "Called Sam", "type": "call", "contact_id": "con_sam_patel"})
    [mine], _ = await run("crm", [note])
    [theirs], _ = await run("crm", [note], member="usr_marco")
    assert (mine.record["user_id"], theirs.record["user_id"]) == (None, "usr_marco")
