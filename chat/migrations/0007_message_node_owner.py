"""chat_message carries its node's owner (column owner_id), like every table of user data, so it can be sharded
by owner beside memory_node. Existing rows get it from their node."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

# Checked at once, so no deferred check is still pending when the column becomes NOT NULL in this transaction.
BACKFILL = """
SET CONSTRAINTS ALL IMMEDIATE;
UPDATE chat_message m SET owner_id = n.owner_id FROM memory_node n WHERE n.id = m.node_ptr_id AND m.owner_id IS NULL;
SET CONSTRAINTS ALL DEFERRED;
"""


def owner_field(null: bool) -> models.ForeignKey:
    return models.ForeignKey(
        db_column="owner_id", db_index=False, editable=False, null=null,
        on_delete=django.db.models.deletion.CASCADE, related_name="+", to=settings.AUTH_USER_MODEL,
    )


class Migration(migrations.Migration):

    dependencies = [
        ("chat", "0006_message_informative_backfill"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(model_name="message", name="node_owner", field=owner_field(null=True)),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField(model_name="message", name="node_owner", field=owner_field(null=False)),
    ]
