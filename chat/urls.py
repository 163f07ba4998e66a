from django.urls import path

from . import views

app_name = "chat"

urlpatterns = [
    path("", views.home, name="home"),
    path("c/new/", views.conversation_new, name="new"),
    path("c/<int:conversation_id>/", views.conversation_page, name="conversation"),
]
