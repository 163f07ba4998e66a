from django.db import migrations

# The word ranking's index of context retrieval (memory.retrieval): each item's words, each prefixed by its owner's
# id ("42:tortois"), so the entry of one user's word lists only that user's items holding it. node_owner_fts (an
# owner token beside the words) makes the index intersect the owner's entry (every item of theirs: 100,000 for a
# heavy user) with the word's, for every word of every message; here one entry is read, no longer than the user's
# holders of the word. node_owner_fts stays for arbitrary full-text queries (verification, the residue scan).
FUNCTION = """
CREATE FUNCTION memory_owner_words(owner bigint, content text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(
        SELECT owner::text || ':' || word
        FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, COALESCE(content, ''::text)))) AS word
    )
"""


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0010_embedding_retrievable"),
    ]

    operations = [
        migrations.RunSQL(FUNCTION, "DROP FUNCTION IF EXISTS memory_owner_words(bigint, text)"),
        migrations.RunSQL(
            "CREATE INDEX node_owner_words ON memory_node USING gin (memory_owner_words(owner_id, content)) "
            "WHERE retrievable AND informative",
            "DROP INDEX IF EXISTS node_owner_words",
        ),
    ]
