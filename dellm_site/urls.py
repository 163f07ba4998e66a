from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from accounts import api as accounts_api
from accounts import views as accounts_views
from accounts.authentication import ApiTokenAuthentication
from chat import api as chat_api
from chat import openai_compat
from dellm_site import views as site_views
from memory import api as memory_api
from memory import views as memory_views
from provenance import api as forget_api
from provenance import desk
from provenance import views as forget_views

# OpenAI clients send API keys only; without session authentication they never meet CSRF checks.
openai_auth = {"authentication_classes": [ApiTokenAuthentication]}

api_patterns = [
    path("auth/signup/", accounts_api.SignupApi.as_view(), name="signup"),
    path("auth/token/", accounts_api.TokenObtainApi.as_view(), name="token"),
    path("conversations/", chat_api.ConversationListApi.as_view(), name="conversations"),
    path("conversations/<int:conversation_id>/", chat_api.ConversationDetailApi.as_view(), name="conversation"),
    path(
        "conversations/<int:conversation_id>/discard/", chat_api.ConversationDiscardApi.as_view(), name="discard"
    ),
    path("conversations/<int:conversation_id>/messages/", chat_api.MessageListApi.as_view(), name="messages"),
    path(
        "conversations/<int:conversation_id>/messages/<int:message_id>/answer-again/",
        chat_api.AnswerAgainApi.as_view(),
        name="answer-again",
    ),
    path("messages/<int:message_id>/influence/", chat_api.MessageInfluenceApi.as_view(), name="influence"),
    path(
        "messages/<int:message_id>/influence/graph/",
        chat_api.MessageInfluenceGraphApi.as_view(),
        name="influence-graph",
    ),
    path("forget/", forget_api.ForgetListApi.as_view(), name="forget-list"),
    path("forget/preview/", forget_api.ForgetPreviewApi.as_view(), name="forget-preview"),
    path("forget/<str:request_id>/", forget_api.ForgetDetailApi.as_view(), name="forget-detail"),
    path("forget/<str:request_id>/confirm/", forget_api.ForgetConfirmApi.as_view(), name="forget-confirm"),
    path("forget/<str:request_id>/items/", forget_api.ForgetItemsApi.as_view(), name="forget-items"),
    path("forget/<str:request_id>/graph/", forget_api.ForgetGraphApi.as_view(), name="forget-graph"),
    path("forget/<str:request_id>/cancel/", forget_api.ForgetCancelApi.as_view(), name="forget-cancel"),
    path("account/export/", accounts_api.AccountExportApi.as_view(), name="account-export"),
    path("account/delete/", accounts_api.AccountDeleteApi.as_view(), name="account-delete"),
    path("account/logout-everywhere/", accounts_api.LogoutEverywhereApi.as_view(), name="logout-everywhere"),
    path("tokens/", accounts_api.TokenListApi.as_view(), name="tokens"),
    # An integer for a named token, "login" for the login token.
    path("tokens/<str:token_id>/revoke/", accounts_api.TokenRevokeApi.as_view(), name="token-revoke"),
    path("memory/", memory_api.MemoryApi.as_view(), name="memory"),
    path("memory/settings/", memory_api.MemorySettingsApi.as_view(), name="memory-settings"),
    path("memory/facts/<int:fact_id>/rectify/", memory_api.FactRectifyApi.as_view(), name="fact-rectify"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
]

urlpatterns = [
    # The deletion review desk lives in the admin, for deletion reviewers only.
    path("admin/desk/", desk.reviewer_view(desk.desk), name="desk"),
    path("admin/desk/action/", desk.reviewer_view(desk.desk_action), name="desk-action"),
    path("admin/desk/export/", desk.reviewer_view(desk.desk_export), name="desk-export"),
    path("admin/desk/monthly/", desk.reviewer_view(desk.desk_monthly), name="desk-monthly"),
    path("admin/", admin.site.urls),
    path("v1/chat/completions", openai_compat.ChatCompletionsApi.as_view(**openai_auth), name="openai-chat"),
    path("v1/models", openai_compat.ModelsApi.as_view(**openai_auth), name="openai-models"),
    path("api/", include((api_patterns, "api"))),
    path("accounts/signup/", accounts_views.signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", site_views.healthz, name="healthz"),
    path("account/", accounts_views.account, name="account"),
    path("account/export.json", accounts_views.account_export_download, name="account-export"),
    path("forget/history/", forget_views.history, name="forget-history"),
    path("forget/history/<str:request_id>/", forget_views.history_detail, name="forget-history-detail"),
    path("memory/", memory_views.memory_page, name="memory"),
    path("", include("chat.urls")),
]

handler400 = "dellm_site.views.bad_request"
handler404 = "dellm_site.views.not_found"
handler500 = "dellm_site.views.server_error"
