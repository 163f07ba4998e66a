"""Site-wide views: sign-up, API token, health, JSON 404 for API paths."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

from dellm_site import services
from dellm_site.errors import ApplicationError


def signup(request):
    if request.user.is_authenticated:
        return redirect("chat:home")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("chat:home")
    return render(request, "registration/signup.html", {"form": form})


class TokenObtainApi(ObtainAuthToken):
    """Exchange a username and password for an API token (``Authorization: Token <token>``)."""

    permission_classes = [AllowAny]
    renderer_classes = ObtainAuthToken.renderer_classes

    @extend_schema(
        request=AuthTokenSerializer,
        responses=inline_serializer("TokenResponse", {"token": serializers.CharField()}),
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)


class SignupSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(write_only=True, style={"input_type": "password"})


class SignupApi(APIView):
    """Create an account and return its API token."""

    permission_classes = [AllowAny]
    authentication_classes = []
    throttle_classes = [AnonRateThrottle]

    @extend_schema(
        request=SignupSerializer,
        responses={201: inline_serializer("SignupResponse", {"token": serializers.CharField(), "username": serializers.CharField()})},
    )
    def post(self, request):
        data = SignupSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user, token = services.account_create(**data.validated_data)
        return Response({"username": user.username, "token": token}, status=201)


def _probe(check) -> str:
    try:
        return check()
    except Exception as exc:  # report, don't crash, so a load balancer gets an answer
        return f"error: {exc.__class__.__name__}"


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _redis() -> str:
    import redis

    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
    return "ok"


def _workers() -> str:
    from dellm_site.celery import app

    replies = app.control.inspect(timeout=1.0).ping() or {}
    return f"ok ({len(replies)})" if replies else "error: no worker answered"


@require_GET
def healthz(request):
    """Reachability of the database and, with REDIS_URL, of Redis and the Celery workers."""
    report = {"database": _probe(_database)}
    if settings.REDIS_URL:
        report["redis"] = _probe(_redis)
        report["workers"] = _probe(_workers) if report["redis"] == "ok" else "unknown: redis unreachable"
    else:
        report["redis"] = report["workers"] = "not used (tasks run in-process)"
    ok = report["database"] == "ok" and not any(str(v).startswith("error") for v in report.values())
    return JsonResponse({"status": "ok" if ok else "degraded", **report}, status=200 if ok else 503)


@login_required
def account(request):
    """Account page: API tokens, download my data, delete my account."""
    from chat.models import ApiToken
    from chat.tokens import token_create, token_revoke

    new_key = None
    error = None
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "create-token":
                _, new_key = token_create(user=request.user, name=request.POST.get("name", ""))
            elif action == "revoke-token":
                token_revoke(user=request.user, token_id=request.POST.get("token_id"))
                return redirect("account")
            elif action == "delete-account":
                manifest = services.account_delete(user=request.user, password=request.POST.get("password", ""))
                logout(request)
                return render(request, "account/deleted.html", {"manifest": manifest})
        except ApplicationError as exc:
            error = exc.detail
    tokens = ApiToken.objects.filter(owner=request.user)
    return render(request, "account/account.html", {"tokens": tokens, "new_key": new_key, "error": error,
                                                    "base_url": request.build_absolute_uri("/v1")})


@login_required
@require_GET
def account_export_download(request):
    """Download my data: one JSON file with everything DeLLM holds about the account."""
    data = services.account_export(user=request.user)
    response = JsonResponse(data, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="dellm-{request.user.get_username()}.json"'
    return response


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)


class AccountExportApi(APIView):
    @extend_schema(responses=inline_serializer("Export", {"format": serializers.CharField()}),
                   description="Everything DeLLM holds about you, as JSON.")
    def get(self, request):
        return Response(services.account_export(user=request.user))


class AccountDeleteSerializer(serializers.Serializer):
    password = serializers.CharField(style={"input_type": "password"})


class AccountDeleteApi(APIView):
    @extend_schema(request=AccountDeleteSerializer, responses={200: inline_serializer("AccountDeleted", {"deleted": serializers.DictField()})},
                   description="Delete the account and everything in it (same cascade as forget); returns the manifest.")
    def post(self, request):
        data = AccountDeleteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(services.account_delete(user=request.user, password=data.validated_data["password"]))


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    name = serializers.CharField(max_length=100)
    prefix = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    last_used_at = serializers.DateTimeField(read_only=True)
    revoked_at = serializers.DateTimeField(read_only=True)


class TokenListApi(APIView):
    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        from chat.models import ApiToken

        return Response(TokenSerializer(ApiToken.objects.filter(owner=request.user), many=True).data)

    @extend_schema(request=TokenSerializer, responses={201: inline_serializer("NewToken", {"id": serializers.IntegerField(), "name": serializers.CharField(), "key": serializers.CharField()})},
                   description="Create a named token; the key is returned once.")
    def post(self, request):
        from chat.tokens import token_create

        data = TokenSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        token, key = token_create(user=request.user, name=data.validated_data["name"])
        return Response({**TokenSerializer(token).data, "key": key}, status=201)


class TokenRevokeApi(APIView):
    @extend_schema(request=None, responses=TokenSerializer)
    def post(self, request, token_id: int):
        from chat.tokens import token_revoke

        return Response(TokenSerializer(token_revoke(user=request.user, token_id=token_id)).data)
