"""Database engines of DeLLM."""
