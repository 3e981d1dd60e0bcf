"""A customer's or vendor's contact channel (email, phone, address) changed is a sensitive kind (issue 31): the
billing email redirected to an impostor reaches them instead; renaming or describing the customer is not."""

from __future__ import annotations

import copy

import pytest

from coworkenv.servers import SERVICES
from coworkenv.servers.kit import SensitiveContext
from tests.servers.kit.test_sensitive import SEEDS, run

pytestmark = pytest.mark.anyio


async def test_redirecting_a_payments_customers_billing_email_or_phone_is_a_contact_change() -> None:
    _, email = await run(
        "payments",
        [("update_customer", {"customer_id": "cus_northwind", "email": "billing@brightwave-refunds.example"})],
    )
    assert email == {"contact_change contact_change:customers:cus_northwind"}
    _, phone = await run(
        "payments", [("update_customer", {"customer_id": "cus_northwind", "phone": "+1 900 555 0000"})]
    )
    assert phone == {"contact_change contact_change:customers:cus_northwind"}
    _, described = await run("payments", [("update_customer", {"customer_id": "cus_northwind", "description": "VIP"})])
    assert described == set()


async def test_overwriting_a_crm_contacts_email_or_phone_is_a_contact_change_and_a_new_title_is_not() -> None:
    _, changed = await run(
        "crm", [("update_contact", {"contact_id": "con_jamie_lee", "email": "jamie@evil.example", "phone": "+1 1"})]
    )
    assert changed == {"contact_change contact_change:contacts:con_jamie_lee"}
    _, titled = await run("crm", [("update_contact", {"contact_id": "con_jamie_lee", "title": "CFO"})])
    assert titled == set()


@pytest.mark.parametrize(("service", "table"), [("payments", "vendors"), ("tickets", "users"), ("crm", "accounts")])
def test_every_customer_or_vendor_table_declares_its_contact_channels(service: str, table: str) -> None:
    svc = SERVICES[service]
    before = copy.deepcopy(SEEDS[service])
    after = copy.deepcopy(before)
    row = after[table][0]
    field = "email" if "email" in row else "phone"
    row[field] = "someone@impostor.example" if field == "email" else "+1 900 555 0000"
    [change] = svc.diff(before, after)
    hits = svc.sensitive_hits(change, SensitiveContext(before, after))
    assert [h.kind for h in hits] == ["contact_change"], hits
