from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat"

    def ready(self):
        from provenance.forgetting import hooks

        from . import forgetting

        hooks.scope_register("conversation", forgetting.conversation_scope)
        hooks.erasure_pending.connect(forgetting.on_erasure_pending, dispatch_uid="chat.erasure_pending")
        hooks.residue_scan.connect(forgetting.on_residue_scan, dispatch_uid="chat.residue_scan")
        hooks.residue_titles_scan.connect(forgetting.on_residue_titles_scan, dispatch_uid="chat.residue_titles_scan")
