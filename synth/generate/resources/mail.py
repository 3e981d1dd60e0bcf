"""An .eml file (RFC 822 / MIME) read into a :class:`~coworkenv.synth.generate.resources.model.Mail`: From, To, Cc,
Subject, Date and Message-ID; the body is the first text/plain part that is not an attachment (else the first
text/html part with its tags taken out); parts with a file name are listed as attachments."""

from __future__ import annotations

import email
import email.policy
import html
import re
from datetime import UTC
from email.message import EmailMessage, Message
from email.utils import getaddresses, parsedate_to_datetime

from coworkenv.servers.email.models import normalise_address
from coworkenv.servers.kit import format_time
from coworkenv.synth.generate.resources.model import Attachment, Mail

MAX_BODY = 20_000
_TAG = re.compile(r"<[^>]{0,2000}>")


class BadFile(ValueError):
    """A file that cannot be loaded; the message says why (the loader names the file)."""


def parse_mail(raw: bytes, path: str) -> Mail:
    """The message of an .eml file's bytes (its id left empty: the loader gives it)."""
    try:
        msg = email.message_from_bytes(raw, policy=email.policy.default)
    except Exception as exc:  # the parser is lenient; anything it still raises is a malformed file
        raise BadFile(f"not a readable email message ({type(exc).__name__})") from None
    if not isinstance(msg, EmailMessage) or not msg.keys():
        raise BadFile("has no mail headers")
    sender = _addresses(msg, "From")
    if len(sender) != 1:
        raise BadFile("needs exactly one sender in its From header")
    from_name, from_address = sender[0]
    date = _date(msg)
    body, attachments = _body(msg)
    subject = " ".join(str(msg.get("Subject", "")).split())
    message_id = str(msg.get("Message-ID", "")).strip()
    return Mail(
        id="",
        path=path,
        from_address=from_address,
        from_name=from_name,
        to=tuple(a for _, a in _addresses(msg, "To")),
        cc=tuple(a for _, a in _addresses(msg, "Cc")),
        subject=subject,
        date=date,
        body=body,
        attachments=tuple(attachments),
        message_id=message_id if message_id.startswith("<") and message_id.endswith(">") else "",
    )


def _addresses(msg: EmailMessage, header: str) -> list[tuple[str, str]]:
    try:
        values = [str(v) for v in msg.get_all(header) or []]
    except Exception:
        raise BadFile(f"its {header} header cannot be read") from None
    out: list[tuple[str, str]] = []
    for name, address in getaddresses(values):
        if not address:
            continue
        try:
            out.append((" ".join(name.split()), normalise_address(address)))
        except ValueError:
            raise BadFile(f"its {header} header holds {address[:80]!r}, which is not an email address") from None
    return out


def _date(msg: EmailMessage) -> str:
    value = msg.get("Date")
    if value is None:
        raise BadFile("has no Date header")
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        raise BadFile(f"its Date header {str(value)[:60]!r} is not a date") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return format_time(when)


def _body(msg: EmailMessage) -> tuple[str, list[Attachment]]:
    plain: str | None = None
    markup: str | None = None
    attachments: list[Attachment] = []
    for part in msg.walk() if msg.is_multipart() else [msg]:
        if part.is_multipart():
            continue
        filename = part.get_filename()
        if filename or part.get_content_disposition() == "attachment":
            payload = part.get_payload(decode=True)
            size = len(payload) if isinstance(payload, bytes) else 0
            attachments.append(Attachment(filename or "attachment", part.get_content_type(), size))
            continue
        kind = part.get_content_type()
        if kind == "text/plain" and plain is None:
            plain = _text(part)
        elif kind == "text/html" and markup is None:
            markup = _text(part)
    if plain is None and markup is not None:
        plain = html.unescape(_TAG.sub(" ", markup))
    body = (plain or "").replace("\r\n", "\n").strip()
    body = "\n".join(line.rstrip() for line in body.splitlines())
    if not body and not attachments:
        raise BadFile("has no text body and no attachments")
    return body[:MAX_BODY], attachments


def _text(part: Message) -> str:
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    charset = part.get_content_charset() or "utf-8"
    try:
        return payload.decode(charset)
    except (LookupError, UnicodeDecodeError):
        raise BadFile(f"a text part is not valid {charset}") from None
