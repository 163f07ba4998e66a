"""The audit log keeps only the keyed pseudonym of a requester: stored usernames are cleared, then the column goes."""

from django.db import migrations


def clear_usernames(apps, schema_editor):
    # Emptied first: PostgreSQL's DROP COLUMN leaves the old values in the table's pages until rows are rewritten.
    apps.get_model("provenance", "AuditRecord").objects.exclude(requester_username="").update(requester_username="")


class Migration(migrations.Migration):
    dependencies = [("provenance", "0003_move_edge_to_memory")]

    operations = [
        migrations.RunPython(clear_usernames, migrations.RunPython.noop, elidable=True),
        migrations.RemoveField(model_name="auditrecord", name="requester_username"),
    ]
