"""Server-rendered chat pages; the websocket and influence panel are driven by static/js/chat.js."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from dellm_site.errors import NotFound

from . import selectors, services
from .serializers import messages_in_reading_order, messages_serialize
from .temporary import temporary_conversations_expire


def home(request):
    """The latest conversation for a signed-in user; for a visitor, what DeLLM is."""
    if not request.user.is_authenticated:
        return render(request, "landing.html")
    if settings.CELERY_TASK_ALWAYS_EAGER:  # no beat without workers: the user's idle temporary chats go now
        temporary_conversations_expire(user=request.user)
    latest = selectors.conversation_list(user=request.user).first()
    if latest is None:
        return render(request, "chat/chat.html", {"conversations": [], "conversation": None, "messages": []})
    return redirect("chat:conversation", conversation_id=latest.pk)


@login_required
@require_POST
def conversation_new(request):
    """A new conversation; a temporary chat when the form says so."""
    conversation = services.conversation_create(user=request.user, temporary=request.POST.get("temporary") == "1")
    return redirect("chat:conversation", conversation_id=conversation.pk)


@login_required
def conversation_page(request, conversation_id: int):
    try:
        conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
    except NotFound:
        # The site's own page, with debug on too: a forgotten conversation's link is an everyday visit.
        return render(request, "404.html", {"what": "conversation"}, status=404)
    messages = messages_in_reading_order(
        messages_serialize(selectors.message_list(user=request.user, conversation_id=conversation.pk))
    )
    return render(
        request,
        "chat/chat.html",
        {
            "conversations": selectors.conversation_list(user=request.user),
            "conversation": conversation,
            "messages": messages,
            "temporary_hours": settings.DELLM_TEMPORARY_CHAT_HOURS,
        },
    )
