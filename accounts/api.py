"""REST endpoints of the account: sign-up, sign-in, API tokens, signing out everywhere, data export, account
deletion."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from . import lockout, selectors, services
from .serializers import (
    TOKEN_ID_DESCRIPTION,
    AccountDeleteSerializer,
    ErrorSerializer,
    SignupSerializer,
    TokenObtainSerializer,
    TokenSerializer,
)


class TokenObtainApi(ObtainAuthToken):
    """Exchange a username and password for the account's login token (``Authorization: Token <token>``).

    Failed attempts are counted per username and client address; past the limit the pair is refused with 429
    (``too_many_attempts``) until it has been quiet for the lockout time, whatever the password."""

    permission_classes = [AllowAny]
    renderer_classes = ObtainAuthToken.renderer_classes
    serializer_class = TokenObtainSerializer

    @extend_schema(
        request=TokenObtainSerializer,
        responses={
            200: inline_serializer("TokenResponse", {"token": serializers.CharField()}),
            400: ErrorSerializer,
            429: OpenApiResponse(ErrorSerializer, description="Too many failed attempts for this username "
                                 "from this address (code `too_many_attempts`); see the Retry-After header."),
        },
    )
    def post(self, request, *args, **kwargs):
        data = self.get_serializer(data=request.data)
        if not data.is_valid():
            # Set by django-axes while it refuses this username and address.
            if getattr(request, "axes_locked_out", False):
                raise lockout.TooManyAttempts()
            raise ValidationError(data.errors)
        user = data.validated_data["user"]
        lockout.forget_failures(request, username=user.get_username())
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class SignupApi(APIView):
    """Create an account and return its API token."""

    permission_classes = [AllowAny]
    authentication_classes = []
    throttle_classes = [AnonRateThrottle]

    @extend_schema(
        request=SignupSerializer,
        responses={
            201: inline_serializer(
                "SignupResponse", {"token": serializers.CharField(), "username": serializers.CharField()}
            )
        },
    )
    def post(self, request):
        data = SignupSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, token = services.account_create(**data.validated_data)
        return Response({"username": user.username, "token": token}, status=201)


class AccountExportApi(APIView):
    @extend_schema(responses=inline_serializer("Export", {"format": serializers.CharField()}),
                   description="Everything DeLLM holds about you, as JSON.")
    def get(self, request):
        return Response(services.account_export(user=request.user))


class AccountDeleteApi(APIView):
    @extend_schema(
        request=AccountDeleteSerializer,
        responses={200: inline_serializer("AccountDeleted", {"deleted": serializers.DictField()})},
        description="Delete the account and everything in it (same cascade as forget); returns the manifest.",
    )
    def post(self, request):
        data = AccountDeleteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(services.account_delete(user=request.user, password=data.validated_data["password"]))


class TokenListApi(APIView):
    @extend_schema(
        responses=TokenSerializer(many=True),
        description="The account's tokens, revoked ones included: the login token (id `login`) while there is one, "
        "then the named tokens. Keys are never listed.",
    )
    def get(self, request):
        return Response(TokenSerializer(selectors.token_entries(user=request.user), many=True).data)

    @extend_schema(
        request=TokenSerializer,
        responses={
            201: inline_serializer(
                "NewToken",
                {"id": serializers.IntegerField(), "name": serializers.CharField(), "key": serializers.CharField()},
            )
        },
        description="Create a named token; the key is returned once.",
    )
    def post(self, request):
        data = TokenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = services.token_create(user=request.user, name=data.validated_data["name"])
        return Response({**TokenSerializer(selectors.TokenEntry.of_named(token)).data, "key": key}, status=201)


class TokenRevokeApi(APIView):
    @extend_schema(
        request=None,
        responses={200: TokenSerializer, 404: ErrorSerializer},
        parameters=[
            OpenApiParameter("token_id", str, OpenApiParameter.PATH, description=TOKEN_ID_DESCRIPTION,
                             pattern="^([0-9]+|login)$")
        ],
        description="Revoke a token: it is refused from then on. The login token is deleted (signing in with "
        "`POST /api/auth/token/` makes a new one); a named token stays listed as revoked.",
    )
    def post(self, request, token_id: str):
        return Response(TokenSerializer(services.token_revoke(user=request.user, token_id=token_id)).data)


class LogoutEverywhereApi(APIView):
    @extend_schema(
        request=None,
        responses=inline_serializer(
            "LoggedOutEverywhere", {"sessions": serializers.IntegerField(), "tokens": serializers.IntegerField()}
        ),
        description="Sign out everywhere: end every browser session of the account and revoke every token, the "
        "login token and the one used for this call included. Returns how many of each were ended.",
    )
    def post(self, request):
        return Response(services.logout_everywhere(user=request.user))
