"""JSON shapes of the account API."""

from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    """Every API error: a machine code and a readable sentence."""

    code = serializers.CharField()
    detail = serializers.CharField()


class SignupSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(write_only=True, style={"input_type": "password"})


class AccountDeleteSerializer(serializers.Serializer):
    password = serializers.CharField(style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    name = serializers.CharField(max_length=100)
    prefix = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    last_used_at = serializers.DateTimeField(read_only=True)
    revoked_at = serializers.DateTimeField(read_only=True)
