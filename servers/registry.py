"""The services that ship with coworkenv, by name."""

from __future__ import annotations

from coworkenv.servers.chat import SERVICE as CHAT
from coworkenv.servers.crm import SERVICE as CRM
from coworkenv.servers.docs import SERVICE as DOCS
from coworkenv.servers.email import SERVICE as EMAIL
from coworkenv.servers.kit import EnvironmentConfigError, Service
from coworkenv.servers.payments import SERVICE as PAYMENTS
from coworkenv.servers.tickets import SERVICE as TICKETS

SERVICES: dict[str, Service] = {s.name: s for s in (EMAIL, TICKETS, CRM, PAYMENTS, DOCS, CHAT)}


def get_service(name: str) -> Service:
    try:
        return SERVICES[name]
    except KeyError:
        raise EnvironmentConfigError(f"unknown service {name!r}; available: {', '.join(sorted(SERVICES))}") from None
