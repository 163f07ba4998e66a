"""memory_fact and memory_summary carry their node's owner (column owner_id), like every table of user data, so
they can be sharded by owner beside memory_node. Existing rows get it from their node."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Checked at once, so no deferred check is still pending when the columns become NOT NULL in this transaction.
BACKFILL = """
SET CONSTRAINTS ALL IMMEDIATE;
UPDATE memory_fact f SET owner_id = n.owner_id FROM memory_node n WHERE n.id = f.node_ptr_id AND f.owner_id IS NULL;
UPDATE memory_summary s SET owner_id = n.owner_id FROM memory_node n WHERE n.id = s.node_ptr_id AND s.owner_id IS NULL;
SET CONSTRAINTS ALL DEFERRED;
"""


def owner_field(null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        db_column="owner_id", db_index=False, editable=False, null=null,
        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL,
    )


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0008_edge_owner"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(model_name="fact", name="node_owner", field=owner_field(null=True)),
        migrations.AddField(model_name="summary", name="node_owner", field=owner_field(null=True)),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="fact", name="node_owner", field=owner_field(null=False)),
        migrations.AlterField(model_name="summary", name="node_owner", field=owner_field(null=False)),
    ]
