from django.db import migrations

# The full-text index of one user's items, of every kind (verification, the residue scan, the target resolver):
# each item's words prefixed by its owner's id (memory_owner_words, as node_owner_words has them for context
# retrieval's competing items only), as a tsvector, so a word or a prefix ('42:lisb':*) reads one user's entries.
# It replaces node_owner_fts, whose owner token beside the words made a prefix read every user's words with that
# prefix and intersect them with all of the user's items (half a second a deletion at 100,000 items).
OWNED_LEXEMES = "array_to_tsvector(memory_owner_words(owner_id, content))"
OWNED_DOCUMENT = (
    "(array_to_tsvector(ARRAY['owner:' || owner_id::text]) "
    "|| to_tsvector('english'::regconfig, COALESCE(content, ''::text)))"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0011_node_owner_words"),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX node_owner_lexemes ON memory_node USING gin ({OWNED_LEXEMES})",
            "DROP INDEX IF EXISTS node_owner_lexemes",
        ),
        migrations.RunSQL(
            "DROP INDEX IF EXISTS node_owner_fts",
            f"CREATE INDEX node_owner_fts ON memory_node USING gin ({OWNED_DOCUMENT})",
        ),
    ]
