"""PostgreSQL on the embedded pgserver, started on first connection (ENGINE "dellm_site.db.embedded")."""
