"""Site-wide views: sign-up, API token, health, JSON 404 for API paths."""

from __future__ import annotations

from django.contrib.auth import login
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


@require_GET
def healthz(request):
    """Liveness and database reachability."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        database = "ok"
    except Exception as exc:  # report, don't crash, so a load balancer gets an answer
        database = f"error: {exc.__class__.__name__}"
    ok = database == "ok"
    return JsonResponse({"status": "ok" if ok else "degraded", "database": database}, status=200 if ok else 503)


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)
