"""Guards of the streamable-HTTP door: a bearer token checked on every request, and allowed Host/Origin values.

Bound to loopback, the SDK's DNS-rebinding protection already answers 421/403 to a foreign Host/Origin; any
other bind address needs a token (``--token`` or ``COWORKENV_TOKEN``) and the Host/Origin values it may be
reached by. The token is compared in constant time and never logged or echoed.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_ENV = "COWORKENV_TOKEN"
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
MIN_TOKEN_LENGTH = 16
TOKEN_ADVICE = f'pass --token TOKEN or set {TOKEN_ENV} (make one with `python -c "import secrets; print(secrets.token_urlsafe(32))"`)'


def is_loopback(host: str) -> bool:
    return host.strip().lower().strip("[]") in LOOPBACK_HOSTS


def token_problem(host: str, token: str | None) -> str | None:
    """Why serving HTTP on ``host`` with ``token`` is refused (one sentence), or None when it may start."""
    if token is None or token == "":
        if is_loopback(host):
            return None
        return f"serving on {host} (beyond loopback) needs a bearer token; {TOKEN_ADVICE}"
    if len(token) < MIN_TOKEN_LENGTH:
        return f"the token is shorter than {MIN_TOKEN_LENGTH} characters; {TOKEN_ADVICE}"
    if not all("!" <= ch <= "~" for ch in token):
        return f"the token must be printable ASCII without spaces (it travels in an HTTP header); {TOKEN_ADVICE}"
    return None


def _host_header_form(host: str) -> str:
    """How ``host`` appears in a Host header: IPv6 addresses in brackets."""
    bare = host.strip("[]")
    try:
        if ipaddress.ip_address(bare).version == 6:
            return f"[{bare}]"
    except ValueError:
        pass
    return host


def allow_host_problem(value: str) -> str | None:
    """Why an ``--allow-host`` value is unusable, or None."""
    if value == "*":
        return None
    if not value or any(ch.isspace() or ch in "/@?#" for ch in value) or value.startswith(("http:", "https:")):
        return (
            f"--allow-host {value!r} is not a host; give a name or address as it appears in the Host header "
            "(example.internal, 10.0.0.5, 10.0.0.5:8000, [fd00::1]) or * for any"
        )
    return None


def _host_patterns(value: str) -> list[str]:
    """Host-header patterns for one allowed host: with a port as given, else the bare name and any port."""
    value = _host_header_form(value)
    has_port = "]:" in value if value.startswith("[") else ":" in value
    return [value] if has_port else [value, f"{value}:*"]


def security_settings(host: str, allow_hosts: tuple[str, ...] | list[str] = ()) -> TransportSecuritySettings:
    """Allowed Host/Origin values for a server bound to ``host``.

    Always loopback names; the bind address itself unless it is a wildcard; for a wildcard (0.0.0.0, ::) the
    machine's host name as well; plus every ``--allow-host``. ``*`` among them lets any Host and Origin in
    (behind a proxy that rewrites Host); the token still guards every request.
    """
    if "*" in allow_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names: list[str] = list(LOOPBACK_HOSTS)
    bind = host.strip()
    if bind not in WILDCARD_HOSTS and not is_loopback(bind):
        names.append(bind)
    if bind in WILDCARD_HOSTS:
        names.append(socket.gethostname())
    names.extend(allow_hosts)
    hosts: list[str] = []
    for name in names:
        for pattern in _host_patterns(name):
            if pattern not in hosts:
                hosts.append(pattern)
    origins = [f"{scheme}://{pattern}" for pattern in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class BearerTokenMiddleware:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``; 401 otherwise."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = token.encode("ascii")

    def _authorized(self, scope: Scope) -> bool:
        given = b""
        for key, value in scope.get("headers", []):
            if key.lower() == b"authorization":
                given = value
                break
        scheme, _, credentials = given.strip().partition(b" ")
        ok_scheme = scheme.lower() == b"bearer"
        # compare_digest on every request, whatever the scheme, so timing says nothing about the token
        ok_token = hmac.compare_digest(credentials.strip(), self._expected)
        return ok_scheme and ok_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = json.dumps(
            {
                "error": "unauthorized",
                "error_description": "send the server's token as the header `Authorization: Bearer <token>`",
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="coworkenv"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _allowed(value: str, patterns: list[str]) -> bool:
    value = value.strip().lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if (pattern.endswith(":*") and value.startswith(pattern[:-1])) or value == pattern:
            return True
    return False


class HostGuardMiddleware:
    """ASGI middleware against DNS rebinding for a server outside the MCP SDK (the OpenEnv door): a request whose
    Host header is not one of :func:`security_settings`' hosts gets 421, one whose Origin (when sent) is not one of
    its origins 403; a WebSocket handshake either way is closed (1008)."""

    def __init__(self, app: ASGIApp, settings: TransportSecuritySettings) -> None:
        self.app = app
        self.settings = settings

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        if not self.settings.enable_dns_rebinding_protection:
            return None
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get(b"host", "")
        if not _allowed(host, list(self.settings.allowed_hosts)):
            return 421, f"Host {host[:100]!r} is not this server's; use its address or start it with --allow-host"
        origin = headers.get(b"origin")
        if origin is not None and not _allowed(origin, list(self.settings.allowed_origins)):
            return 403, f"Origin {origin[:100]!r} may not call this server"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        problem = self._problem(scope) if scope["type"] in ("http", "websocket") else None
        if problem is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        status, message = problem
        body = json.dumps({"error": "forbidden", "error_description": message}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
