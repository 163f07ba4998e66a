from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProvenanceConfig(AppConfig):
    name = "provenance"
    verbose_name = "Provenance"

    def ready(self):
        from .roles import reviewer_group_ensure

        post_migrate.connect(reviewer_group_ensure, sender=self, dispatch_uid="provenance.reviewer_group")

        from dellm_site.warmup import warm_up_register

        def intent_load() -> None:
            from dellm_site.ai.embedding import get_embedder

            from .forgetting.intent import intent_detect

            get_embedder().embed_one("warm up")
            intent_detect("warm up")

        warm_up_register("intent", intent_load)
