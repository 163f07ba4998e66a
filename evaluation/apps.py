from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """The deletion and performance benchmarks; no models of its own."""

    name = "evaluation"
    verbose_name = "Evaluation"
