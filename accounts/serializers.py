"""JSON shapes of the account API."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

USERNAME_MAX_LENGTH = get_user_model()._meta.get_field("username").max_length


class ErrorSerializer(serializers.Serializer):
    """Every API error: a machine code and a readable sentence."""

    code = serializers.CharField()
    detail = serializers.CharField()


class SignupSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=USERNAME_MAX_LENGTH)
    password = serializers.CharField(write_only=True, style={"input_type": "password"})


class TokenObtainSerializer(AuthTokenSerializer):
    """Sign-in credentials; a username longer than any account's is refused as such, before it is tried."""

    username = serializers.CharField(label="Username", write_only=True, max_length=USERNAME_MAX_LENGTH)


class AccountDeleteSerializer(serializers.Serializer):
    password = serializers.CharField(style={"input_type": "password"})


TOKEN_ID_DESCRIPTION = (
    'A named token\'s integer id, or `"login"` for the account\'s login token (the one made at sign-up and '
    "by `POST /api/auth/token/`)."
)


@extend_schema_field(
    {"oneOf": [{"type": "integer"}, {"type": "string", "enum": ["login"]}], "description": TOKEN_ID_DESCRIPTION}
)
class TokenIdField(serializers.ReadOnlyField):
    """A token's id: an integer, or ``"login"``."""


class TokenSerializer(serializers.Serializer):
    id = TokenIdField()
    name = serializers.CharField(max_length=100)
    prefix = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    last_used_at = serializers.DateTimeField(read_only=True)
    revoked_at = serializers.DateTimeField(read_only=True)
    login_token = serializers.BooleanField(
        read_only=True, help_text="True for the login token; revoking it deletes it, and signing in makes a new one."
    )
