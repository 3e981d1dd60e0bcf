"""Shared builders for the synth tests: a small, valid tickets task as a plain dict, to break on purpose."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import BIG_CORP_SEED, NOW

SEED: dict[str, Any] = {
    "organizations": BIG_CORP_SEED["organizations"],
    "users": [
        *BIG_CORP_SEED["users"],
        {"id": "usr_bob", "name": "Bob Small", "email": "bob@small.com", "organization_id": "org_small"},
    ],
    "tickets": [
        *BIG_CORP_SEED["tickets"],
        {
            "id": "tkt_2",
            "subject": "Question from Small",
            "requester_id": "usr_bob",
            "organization_id": "org_small",
            "status": "open",
            "priority": "high",
            "created_at": "2026-03-01T09:00:00Z",
            "updated_at": "2026-03-01T09:00:00Z",
        },
    ],
}
"""The shared Big Corp seed plus a Small Shop customer with a fresh open ticket (tkt_2)."""


def base_task() -> dict[str, Any]:
    """A valid task: escalate the old enterprise ticket, leave the other one, say which one was escalated."""
    return {
        "id": "test-escalate",
        "version": 1,
        "scenario": "escalation",
        "capabilities": ["search"],
        "difficulty": "easy",
        "services": ["tickets"],
        "now": NOW,
        "request": "Escalate the old ticket from our enterprise customer and tell me its subject.",
        "initial_records": {"tickets": copy.deepcopy(SEED)},
        "completion_checks": [
            {
                "id": "escalated",
                "weight": 0.6,
                "description": "The Big Corp ticket is escalated.",
                "check": {
                    "kind": "record_fields",
                    "service": "tickets",
                    "table": "tickets",
                    "id": "tkt_1",
                    "fields": {"escalated": True},
                },
            },
            {
                "id": "said_subject",
                "weight": 0.3,
                "description": "The agent names the ticket.",
                "check": {"kind": "said_contains", "text": "Outage at Big"},
            },
            {
                "id": "left_small",
                "weight": 0.1,
                "description": "The other ticket is untouched.",
                "check": {"kind": "records_unchanged", "service": "tickets", "table": "tickets", "ids": ["tkt_2"]},
                "requires": ["escalated"],
            },
        ],
        "forbidden_actions": [
            {
                "id": "closed_it",
                "description": "Closing a ticket.",
                "match": {
                    "kind": "tool_called",
                    "service": "tickets",
                    "tool": "update_ticket",
                    "arguments": {"status": {"in": ["solved", "closed"]}},
                },
                "example": {
                    "service": "tickets",
                    "tool": "update_ticket",
                    "arguments": {"ticket_id": "tkt_2", "status": "solved"},
                },
            }
        ],
        "reference_solution": [
            {
                "id": "found",
                "service": "tickets",
                "tool": "search_tickets",
                "arguments": {"organization_id": "org_big", "status": ["open"]},
            },
            {
                "service": "tickets",
                "tool": "escalate_ticket",
                "arguments": {"ticket_id": {"$ref": "found.items.0.id"}, "reason": "Enterprise, waiting too long."},
            },
            {"say": "I escalated 'Outage at Big'."},
        ],
        "metadata": {},
    }


@pytest.fixture
def task_dict() -> dict[str, Any]:
    return base_task()
