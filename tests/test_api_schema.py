"""Every operation of the OpenAPI schema (``/api/schema/``), with generated valid and invalid input, as a
signed-in user: the server answers each with a clear 2xx/4xx, never a server error."""

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig

from chat import services
from memory.facts import facts_extract
from provenance.forgetting.services import forget_preview
from tests.conftest import say

# Seeded and deterministic, so a run finds the same cases every time; about 25 per operation and mode.
CONFIG = SchemathesisConfig.from_dict(
    {"seed": 20251, "generation": {"mode": "all", "max-examples": 25, "deterministic": True}}
)

# The document as the app serves it (reading it touches no database), its operations called in-process.
schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(), config=CONFIG)


@pytest.fixture(autouse=True)
def requests_keep_the_test_connection(db):
    """As in Django's test client: a finished request must not close the connection holding the test's transaction."""
    for signal in (signals.request_started, signals.request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (signals.request_started, signals.request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def stored(user) -> dict:
    """Something of the user's behind every path parameter, so valid cases reach real objects, not only 404s."""
    conversation = services.conversation_create(user=user)
    asked = say(user, conversation, "I live in Lisbon and I have a tortoise called Sheldon.")
    say(user, conversation, "Where do I live?")
    fact = facts_extract(message_id=asked.user_message.pk)[0]
    preview = forget_preview(user=user, mode="keyword", query="Sheldon")
    return {
        "conversation_id": conversation.pk,
        "message_id": asked.reply.pk,
        "fact_id": fact.pk,
        "request_id": str(preview.pk),
    }


@schema.parametrize()
# One user for all of an operation's cases: what earlier cases stored is there for later ones.
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_no_operation_answers_with_a_server_error(case, user, stored):
    if case.meta.generation.mode.is_positive and case.path_parameters:
        case.path_parameters = {name: stored.get(name, value) for name, value in case.path_parameters.items()}
    case.call_and_validate(headers={"Authorization": f"Token {user.token}"}, checks=[not_a_server_error])
