"""Site-wide request and response policies (HTTP middleware) and the websocket origin check (ASGI)."""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from dellm_site.errors import is_api_path, json_error, too_large

DEFAULT_PORTS = {"http": 80, "https": 443}


class RequestSizeLimit:
    """API and /v1 requests whose body is over DATA_UPLOAD_MAX_MEMORY_SIZE get a JSON 413 before anything
    parses them (DRF reads JSON bodies from the stream, past Django's own check)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and is_api_path(request.path_info):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return json_error(request.path_info, too_large())
        return self.get_response(request)


class NoStoreForSignedInPages:
    """Pages of a signed-in user are never cached by the browser: after a deletion, Back must not
    show content that is gone (and a shared computer must not keep it)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response


def origin_parts(value: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) origin, the default port filled in; None for anything else."""
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.path or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def _trusted(origin: tuple[str, str, int], trusted: str) -> bool:
    """Whether ``origin`` is the CSRF_TRUSTED_ORIGINS entry ``trusted`` (which may start ``scheme://*.``)."""
    wildcard = "://*." in trusted
    allowed = origin_parts(trusted.replace("://*.", "://", 1) if wildcard else trusted)
    if allowed is None or allowed[0] != origin[0] or allowed[2] != origin[2]:
        return False
    host = origin[1]
    return host == allowed[1] or (wildcard and host.endswith("." + allowed[1]))


def _secure(scope: dict, headers: dict[bytes, bytes]) -> bool:
    """Whether the client reached the server over TLS, by the scope or the proxy header Django trusts."""
    if scope.get("scheme") in ("wss", "https"):
        return True
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        name, expected = proxy
        value = headers.get(name.removeprefix("HTTP_").replace("_", "-").lower().encode(), b"")
        return value.decode("latin-1").split(",")[0].strip() == expected
    return False


def websocket_origin_allowed(scope: dict) -> bool:
    """A websocket handshake's Origin is the origin this request was served at (scheme, host and port of
    its Host header, a host in ALLOWED_HOSTS) or one of CSRF_TRUSTED_ORIGINS. A handshake without an
    Origin is allowed: browsers always send one, so it comes from a client that is not a web page and
    that holds the user's credentials itself; no other site can make it on the user's behalf."""
    origins = [value for name, value in scope.get("headers", []) if name == b"origin"]
    if not origins:
        return True
    origin = origin_parts(origins[0].decode("latin-1")) if len(origins) == 1 else None
    if origin is None:
        return False  # "null" (sandboxed pages, files), several Origins, or not an http(s) origin
    headers = {name: value for name, value in scope.get("headers", [])}
    host = headers.get(b"host", b"").decode("latin-1")
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:  # as Django's own Host check does in development
        allowed_hosts = [".localhost", "127.0.0.1", "[::1]"]
    domain, _ = split_domain_port(host)
    if domain and validate_host(domain, allowed_hosts):
        served = origin_parts(("https" if _secure(scope, headers) else "http") + "://" + host)
        if served == origin:
            return True
    return any(_trusted(origin, trusted) for trusted in settings.CSRF_TRUSTED_ORIGINS)


class ServedOriginValidator:
    """ASGI middleware: websocket handshakes from any other origin are refused (closed before the
    consumer runs), so no other site, nor another port of this host, can chat as the signed-in user."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not websocket_origin_allowed(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)
