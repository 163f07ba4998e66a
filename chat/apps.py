from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"

    def ready(self):
        from . import schema  # noqa: F401  (registers the OpenAPI description of API keys)
