"""Account pages: sign-up, memory on or off, API tokens, signing out everywhere, download my data, delete my account."""

from __future__ import annotations

from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from dellm_site.errors import ApplicationError
from memory.preferences import memory_enabled, memory_preference_set

from . import selectors, services


def signup(request):
    if request.user.is_authenticated:
        return redirect("chat:home")
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("chat:home")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def account(request):
    """Account page: memory on or off, API tokens, password, signing out everywhere, download my data, delete my
    account."""
    new_key = None
    error = None
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "memory":
                memory_preference_set(user=request.user, enabled=request.POST.get("enabled") == "on")
                return redirect("account")
            if action == "create-token":
                _, new_key = services.token_create(user=request.user, name=request.POST.get("name", ""))
            elif action == "revoke-token":
                services.token_revoke(user=request.user, token_id=request.POST.get("token_id"))
                return redirect("account")
            elif action == "logout-everywhere":
                services.logout_everywhere(user=request.user)
                logout(request)
                return redirect("login")
            elif action == "delete-account":
                manifest = services.account_delete(user=request.user, password=request.POST.get("password", ""))
                logout(request)
                return render(request, "account/deleted.html", {"manifest": manifest})
        except ApplicationError as exc:
            error = exc.detail
    tokens = selectors.token_entries(user=request.user)
    return render(request, "account/account.html", {"tokens": tokens, "new_key": new_key, "error": error,
                                                    "base_url": request.build_absolute_uri("/v1"),
                                                    "memory_on": memory_enabled(user=request.user)})


@login_required
@require_GET
def account_export_download(request):
    """Download my data: one JSON file with everything DeLLM holds about the account."""
    data = services.account_export(user=request.user)
    response = JsonResponse(data, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="dellm-{request.user.get_username()}.json"'
    return response
