"""Every edge carries its owner (dst's owner), so reads of the graph filter by owner like every other table
of user data and the database can be sharded by owner. Existing edges get theirs from their dst."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Checked at once, so no deferred check is still pending when the column becomes NOT NULL in this transaction.
BACKFILL = """
SET CONSTRAINTS ALL IMMEDIATE;
UPDATE provenance_edge e SET owner_id = n.owner_id FROM memory_node n WHERE n.id = e.dst_id AND e.owner_id IS NULL;
SET CONSTRAINTS ALL DEFERRED;
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0007_node_owner_fts"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="edge",
            name="owner",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
            ),
        ),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(
            model_name="edge",
            name="owner",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL
            ),
        ),
    ]
