"""ASGI entry point: HTTP through Django, websockets through Channels."""

import logging
import os
import threading

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dellm_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import WebsocketDenier  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import re_path  # noqa: E402

from chat.routing import websocket_urlpatterns  # noqa: E402
from dellm_site.middleware import ServedOriginValidator  # noqa: E402

logger = logging.getLogger(__name__)

# Any other websocket path is refused at the handshake (403), not answered with a server error.
websocket_routes = [*websocket_urlpatterns, re_path(r"", WebsocketDenier.as_asgi())]

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": ServedOriginValidator(AuthMiddlewareStack(URLRouter(websocket_routes))),
    }
)


def forget_resume_in_background() -> threading.Thread:
    """Finish deletions interrupted by a crash or restart in a thread of their own, so the server
    answers its first request at once however long they take."""

    def run():
        from django.db import connection

        from provenance.forgetting.services import forget_resume

        try:
            result = forget_resume()
            logger.info("resumed %d interrupted deletion(s), expired %d preview(s)", len(result["resumed"]),
                        result["expired"])
        except Exception:  # the next start-up (or a worker) tries again
            logger.exception("resuming interrupted deletions failed")
        finally:
            connection.close()

    thread = threading.Thread(target=run, name="forget-resume", daemon=True)
    thread.start()
    return thread


if settings.DELLM_WARM_AT_START:
    from dellm_site.warmup import warm_up_in_background  # noqa: E402

    warm_up_in_background()

if settings.DELLM_FORGET_RESUME_AT_START:
    forget_resume_in_background()
