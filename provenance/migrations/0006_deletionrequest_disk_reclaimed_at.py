from django.db import migrations, models


class Migration(migrations.Migration):
    """When the maintenance after a wipe ran; deletions made before it had theirs at once."""

    dependencies = [
        ("provenance", "0005_audit_chain"),
    ]

    operations = [
        migrations.AddField(
            model_name="deletionrequest",
            name="disk_reclaimed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunSQL(
            "UPDATE provenance_deletionrequest SET disk_reclaimed_at = coalesce(completed_at, confirmed_at) "
            "WHERE status IN ('verifying', 'completed')",
            migrations.RunSQL.noop,
        ),
    ]
