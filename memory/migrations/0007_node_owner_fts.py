from django.db import migrations

# The full-text index of context retrieval's word ranking, per owner: each item's words and a token naming its
# owner, so "this user's items holding this word" is one GIN lookup (the index intersects the two entries) rather
# than every item of everyone's holding the word, filtered by owner (memory.retrieval).
OWNED_DOCUMENT = (
    "(array_to_tsvector(ARRAY['owner:' || owner_id::text]) "
    "|| to_tsvector('english'::regconfig, COALESCE(content, ''::text)))"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0006_node_informative"),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX node_owner_fts ON memory_node USING gin ({OWNED_DOCUMENT})",
            "DROP INDEX IF EXISTS node_owner_fts",
        ),
    ]
