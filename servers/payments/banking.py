"""Helpers shared by the payments tools: money formatting, lookups, bank-number checks and masked views."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, StringConstraints

from coworkenv.servers.kit import ServiceError
from coworkenv.servers.payments.models import BankAccountView, BankChangeRequestView, Currency

_ZERO_DECIMAL = {
    "bif",
    "clp",
    "djf",
    "gnf",
    "jpy",
    "kmf",
    "krw",
    "mga",
    "pyg",
    "rwf",
    "ugx",
    "vnd",
    "vuv",
    "xaf",
    "xof",
}


def money(amount: int, currency: str) -> str:
    """Cents as a human amount: money(2500, 'usd') == '25.00 USD'."""
    if currency in _ZERO_DECIMAL:
        return f"{amount} {currency.upper()}"
    return f"{amount / 100:,.2f} {currency.upper()}"


# ---------------------------------------------------------------------------------------------- arguments


def _compact(value: Any) -> Any:
    return value.replace(" ", "").replace("-", "").upper() if isinstance(value, str) else value


_Routing = Annotated[str, BeforeValidator(_compact), StringConstraints(pattern=r"^\d{9}$")]
_Account = Annotated[str, BeforeValidator(_compact), StringConstraints(pattern=r"^\d{4,17}$")]
_Iban = Annotated[str, BeforeValidator(_compact), StringConstraints(pattern=r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")]
# (spaces and dashes are removed and letters upper-cased before the pattern is checked; None stays None)

RoutingNumber = Annotated[
    _Routing | None,
    Field(description="US ABA routing number, 9 digits. Example: '021000021'"),
]
AccountNumber = Annotated[
    _Account | None,
    Field(description="Bank account number, 4-17 digits (US accounts). Example: '000123456789'"),
]
Iban = Annotated[
    _Iban | None,
    Field(
        description="IBAN, for non-US accounts instead of routing/account number; spaces are ignored. "
        "Example: 'GB33BUKB20201555555555'"
    ),
]
HolderName = Annotated[
    str, Field(min_length=1, max_length=200, description="Name on the account. Example: 'Stellar Print Co'")
]
BankName = Annotated[str, Field(min_length=1, max_length=200, description="The bank. Example: 'JPMorgan Chase Bank'")]
AccountCurrency = Annotated[Currency, Field(description="Currency of the account, lower case. Example: 'usd'")]


def aba_checksum_ok(routing: str) -> bool:
    """The ABA check: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) is a multiple of 10."""
    d = [int(c) for c in routing]
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 == 0


def iban_checksum_ok(iban: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, the result mod 97 is 1."""
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def bank_details(
    *,
    account_holder_name: str,
    bank_name: str,
    routing_number: str | None,
    account_number: str | None,
    iban: str | None,
    currency: str,
) -> dict[str, Any]:
    """Validate new bank details (US routing + account number, or an IBAN) into record fields."""
    if iban and (routing_number or account_number):
        raise ServiceError(
            "Give either an IBAN or a US routing_number with account_number, not both.",
            "Use routing_number + account_number for US banks and iban elsewhere.",
        )
    if iban:
        if not iban_checksum_ok(iban):
            raise ServiceError(f"IBAN ending {iban[-4:]} fails its check digits.", "Ask for the IBAN again.")
        country, number_fields = iban[:2], {"iban": iban, "routing_number": None, "account_number": None}
        last4 = iban[-4:]
    elif routing_number and account_number:
        if not aba_checksum_ok(routing_number):
            raise ServiceError(
                f"Routing number {routing_number} fails the ABA checksum.", "Check the 9-digit routing number."
            )
        country, number_fields = (
            "US",
            {"iban": None, "routing_number": routing_number, "account_number": account_number},
        )
        last4 = account_number[-4:]
    else:
        raise ServiceError(
            "The new bank details are incomplete.",
            "Give routing_number and account_number (US), or iban (elsewhere).",
        )
    return {
        "account_holder_name": account_holder_name,
        "bank_name": bank_name,
        "country": country,
        "currency": currency,
        "last4": last4,
        **number_fields,
    }


def same_account(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("iban") or b.get("iban"):
        return a.get("iban") == b.get("iban")
    return (a.get("routing_number"), a.get("account_number")) == (b.get("routing_number"), b.get("account_number"))


def bank_view(row: dict[str, Any]) -> BankAccountView:
    return BankAccountView.model_validate(row)  # extra (secret) fields are dropped by the view model


def request_view(row: dict[str, Any]) -> BankChangeRequestView:
    return BankChangeRequestView.model_validate(row)
