"""The email service's labels through the in-memory MCP client: read/unread, user labels, trash."""

from __future__ import annotations

import pytest

from tests.conftest import member_fail, service_client
from tests.servers.email.test_email import ME, SEED, SERVICE, call, fail, ids

pytestmark = pytest.mark.anyio


async def test_modify_labels_marks_read_and_unread_and_files_with_user_labels() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        read = await call(c, "modify_labels", message_id="m_sso", remove_label_ids=["UNREAD"])
        assert read["label_ids"] == ["INBOX"]
        filed = await call(c, "modify_labels", message_id="m_sso", add_label_ids=["Customers", "unread", "starred"],
                           remove_label_ids=["INBOX"])  # fmt: skip
        assert filed["label_ids"] == ["STARRED", "UNREAD", "lbl_cust"]
        assert await ids(c, label_ids=["INBOX"]) == ["m_inv"]
        assert (await call(c, "get_profile"))["inbox_unread"] == 0


async def test_modify_labels_rejects_protected_unknown_or_conflicting_labels() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        before = env.state_hash()
        for label, hint in (("SENT", "follows from sending"), ("DRAFT", "send_draft"), ("TRASH", "trash_message")):
            assert hint in await fail(c, "modify_labels", message_id="m_sso", add_label_ids=[label])
        assert "create_label" in await fail(c, "modify_labels", message_id="m_sso", add_label_ids=["lbl_p"])
        assert "both added and removed" in await fail(
            c, "modify_labels", message_id="m_sso", add_label_ids=["STARRED"], remove_label_ids=["starred"]
        )
        assert "Nothing to change" in await fail(c, "modify_labels", message_id="m_sso")
        assert "No message" in await fail(c, "modify_labels", message_id="nope", add_label_ids=["STARRED"])
        assert env.state_hash() == before


async def test_trash_message_hides_it_and_untrash_message_restores_it() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        trashed = await call(c, "trash_message", message_id="m_inv")
        assert trashed["label_ids"] == ["INBOX", "TRASH", "lbl_cust"]
        assert await call(c, "trash_message", message_id="m_inv") == trashed
        assert "m_inv" not in await ids(c) and "m_inv" in await ids(c, include_spam_trash=True)
        back = await call(c, "untrash_message", message_id="m_inv")
        assert back["label_ids"] == ["INBOX", "lbl_cust"] and "m_inv" in await ids(c, label_ids=["INBOX"])
        assert "No message" in await fail(c, "trash_message", message_id="m_sso_p")
        assert "No message" in await fail(c, "untrash_message", message_id="nope")


async def test_list_labels_counts_messages_and_unread_per_label() -> None:
    async with service_client(SERVICE, SEED) as (c, env):
        labels = {lab["id"]: lab for lab in (await call(c, "list_labels"))["labels"]}
        assert list(labels)[:8] == ["INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "IMPORTANT", "UNREAD"]
        assert (labels["INBOX"]["messages_total"], labels["INBOX"]["messages_unread"]) == (3, 1)
        assert labels["lbl_cust"] == {"id": "lbl_cust", "name": "Customers", "type": "user", "messages_total": 1,
                                      "messages_unread": 0}  # fmt: skip
        assert "lbl_p" not in labels
        assert "No mailbox" in member_fail("email", env, "sam@acmerobotics.com", "list_labels")


async def test_create_label_makes_a_unique_user_label_per_mailbox() -> None:
    async with service_client(SERVICE, SEED) as (c, _):
        label = await call(c, "create_label", name="  Vendors/Stellar ")
        assert label["name"] == "Vendors/Stellar" and label["mailbox"] == ME and label["id"].startswith("lbl_")
        filed = await call(c, "modify_labels", message_id="m_inv", add_label_ids=[label["id"]])
        assert label["id"] in filed["label_ids"]
        assert "already exists" in await fail(c, "create_label", name="vendors/stellar")
        assert "system label" in await fail(c, "create_label", name="Inbox")
        assert "blank" in await fail(c, "create_label", name="   ")
        assert "name" in await fail(c, "create_label", name="")
        assert (await call(c, "create_label", name="P"))["mailbox"] == ME  # Priya's 'P' does not clash
