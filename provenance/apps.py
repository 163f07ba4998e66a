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

        def kinds_load() -> None:
            # The kinds of personal information target resolution places requests and items among: their
            # phrases take about a second to embed, which a user's first Forget in words would wait for.
            from .forgetting.categories import kinds

            kinds()

        warm_up_register("kinds", kinds_load)

        def spelling_load() -> None:
            # The English word list a mistyped target is read against: about 400 ms to build, which a user's
            # first Forget in words would otherwise wait for.
            from .forgetting.spelling import english_load

            english_load()

        warm_up_register("spelling", spelling_load)

        from django.conf import settings

        if settings.DELLM_WIDE_EMBEDDER:
            def wide_load() -> None:
                # The resolver's second reading of meaning, where it is on: unpacked on a machine's first start,
                # then seconds to load.
                from dellm_site.ai.embedding import get_wide_embedder

                wide = get_wide_embedder()
                if wide is not None:
                    wide.embed_one("warm up")

            warm_up_register("wide", wide_load)
