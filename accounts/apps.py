from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        # schema: the OpenAPI description of API keys; signals: a change of password revokes the account's tokens.
        from . import schema, signals  # noqa: F401
