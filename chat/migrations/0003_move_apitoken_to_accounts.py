from django.db import migrations


class Migration(migrations.Migration):
    """ApiToken now belongs to accounts (same table), so chat forgets it without touching the database."""

    dependencies = [
        ("chat", "0002_apitoken_conversation_external_key_and_more"),
        ("accounts", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiToken")],
            database_operations=[],
        ),
    ]
