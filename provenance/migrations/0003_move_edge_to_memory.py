"""Edge now belongs to memory (same table); provenance forgets it in its state only."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("provenance", "0002_auditrecord_deletionrequest"),
        ("memory", "0003_fact_summary_taskrun"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="Edge")], database_operations=[]),
    ]
