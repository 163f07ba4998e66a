"""OpenAPI description of the API-key authentication (loaded by AccountsConfig.ready)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A DeLLM API token: `Authorization: Bearer <key>` (or `Token <key>`).",
        }
