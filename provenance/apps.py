from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ProvenanceConfig(AppConfig):
    name = "provenance"
    verbose_name = "Provenance"

    def ready(self):
        from .roles import reviewer_group_ensure

        post_migrate.connect(reviewer_group_ensure, sender=self, dispatch_uid="provenance.reviewer_group")
