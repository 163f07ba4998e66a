import json, pytest
from chat import services
pytestmark = pytest.mark.django_db(transaction=True)
def test_probe(api, user):
    c1 = services.conversation_create(user=user)
    a = services.message_post(user=user, conversation_id=c1.pk, content="I live in Lisbon.")
    b = services.message_post(user=user, conversation_id=c1.pk, content="I have a tortoise called Sheldon.")
    c2 = services.conversation_create(user=user)
    c = services.message_post(user=user, conversation_id=c2.pk, content="Where do I live?")
    print("ids", a.user_message.pk, a.reply.pk, b.user_message.pk, b.reply.pk, c.user_message.pk, c.reply.pk, c.reply.content, c.context)
    r = api.post(f"/api/conversations/{c2.pk}/messages/", {"content": "Forget that I live in Lisbon"}, format="json")
    print(json.dumps(r.json(), indent=1))
    p = r.json()["forget_preview"]
    r = api.post("/api/forget/preview/", {"mode": "natural", "query": p["query"], "depth": 1}, format="json")
    print(json.dumps(r.json(), indent=1))
    m = api.post(f"/api/forget/{p['request_id']}/confirm/", {}, format="json")
    print(json.dumps(m.json(), indent=1))
    print(json.dumps(api.get("/api/forget/").json(), indent=1))
