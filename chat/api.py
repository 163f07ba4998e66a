"""REST views of the chat: parse, call one service or selector, render."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.graph import context_ids
from memory.selectors import node_summaries
from provenance.api import SvgApiView
from provenance.graph_svg import influence_svg
from provenance.selectors import manifest_data, node_influence
from provenance.serializers import ManifestSerializer

from . import selectors, services, temporary, turns
from .serializers import (
    AnswerAgainResultSerializer,
    ConversationCreateSerializer,
    ConversationSerializer,
    ForgetPreviewResultSerializer,
    InfluenceSerializer,
    MessageCreateSerializer,
    MessageSerializer,
    PostResultSerializer,
    messages_serialize,
)


class ConversationListApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("q", str, description="Only conversations whose title or messages contain it.")],
        responses=ConversationSerializer(many=True),
    )
    def get(self, request):
        conversations = selectors.conversation_list(user=request.user, query=request.query_params.get("q", "")[:200])
        return Response(ConversationSerializer(conversations, many=True).data)

    @extend_schema(request=ConversationCreateSerializer, responses={201: ConversationSerializer})
    def post(self, request):
        data = ConversationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = services.conversation_create(user=request.user, **data.validated_data)
        return Response(ConversationSerializer(conversation).data, status=status.HTTP_201_CREATED)


class ConversationDetailApi(APIView):
    @extend_schema(responses=ConversationSerializer)
    def get(self, request, conversation_id: int):
        conversation = selectors.conversation_get(user=request.user, conversation_id=conversation_id)
        return Response(ConversationSerializer(conversation).data)

    @extend_schema(request=ConversationCreateSerializer, responses=ConversationSerializer, description="Rename.")
    def patch(self, request, conversation_id: int):
        data = ConversationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        conversation = services.conversation_rename(
            user=request.user, conversation_id=conversation_id, title=data.validated_data["title"]
        )
        return Response(ConversationSerializer(conversation).data)


class ConversationDiscardApi(APIView):
    @extend_schema(
        request=None,
        responses=ManifestSerializer,
        description="Discard a temporary chat: it is forgotten with everything in it, through the Forget flow "
        "(so it appears in your deletion history, without its content); returns the manifest. 409 for a "
        "conversation that is not temporary (forget it with /api/forget/preview/, mode 'conversation').",
    )
    def post(self, request, conversation_id: int):
        manifest = temporary.conversation_discard(user=request.user, conversation_id=conversation_id)
        return Response(manifest_data(user=request.user, manifest=manifest))


class MessageListApi(APIView):
    @extend_schema(responses=MessageSerializer(many=True))
    def get(self, request, conversation_id: int):
        return Response(messages_serialize(selectors.message_list(user=request.user, conversation_id=conversation_id)))

    @extend_schema(
        request=MessageCreateSerializer,
        responses={201: PostResultSerializer, 200: ForgetPreviewResultSerializer},
        description="Post a message and get the reply. A deletion request ('forget that ...') is not answered "
        "by the LLM nor stored: the response is {forget_preview} instead (200). A message that may be one gets "
        "{forget_question} (200), also unstored: post it again with intent 'answer' to have it answered, or "
        "preview it with /api/forget/preview/ (mode 'natural').",
    )
    def post(self, request, conversation_id: int):
        data = MessageCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = turns.message_post(
            user=request.user, conversation_id=conversation_id, content=data.validated_data["content"],
            answer=data.validated_data.get("intent") == "answer",
        )
        if result.forget_preview is not None:
            return Response({"forget_preview": result.forget_preview}, status=status.HTTP_200_OK)
        if result.forget_question is not None:
            return Response({"forget_question": result.forget_question}, status=status.HTTP_200_OK)
        user_message, reply, context = result
        contexts = {user_message.pk: [], reply.pk: context}
        body = {
            "user_message": MessageSerializer(user_message, context={"contexts": contexts}).data,
            "reply": MessageSerializer(reply, context={"contexts": contexts}).data,
            "memory_updated": result.memory_updated,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class AnswerAgainApi(APIView):
    @extend_schema(
        request=None,
        responses={201: AnswerAgainResultSerializer},
        description="Answer again a question whose reply was forgotten (its message has reply_removed): a new "
        "reply from what is remembered now, with its own context. 409 for any other message.",
    )
    def post(self, request, conversation_id: int, message_id: int):
        reply, context = turns.answer_again(user=request.user, conversation_id=conversation_id, message_id=message_id)
        body = {"reply": MessageSerializer(reply, context={"contexts": {reply.pk: context}}).data}
        return Response(body, status=status.HTTP_201_CREATED)


class MessageInfluenceApi(APIView):
    @extend_schema(responses=InfluenceSerializer)
    def get(self, request, message_id: int):
        message = selectors.message_get(user=request.user, message_id=message_id)
        influenced = node_influence(user=request.user, node_id=message.pk)
        context = context_ids(node_ids=[message.pk], owner=request.user)[message.pk]
        body = {
            "context": context,
            "influenced": [{"id": e.id, "depth": e.depth, "path": e.path} for e in influenced],
            "items": node_summaries(
                user=request.user, node_ids=[message.pk, *context, *(e.id for e in influenced)]
            ),
        }
        return Response(body)


class MessageInfluenceGraphApi(SvgApiView):
    @extend_schema(
        responses={(200, "image/svg+xml"): OpenApiResponse(OpenApiTypes.STR)},
        description="The influence as a picture (SVG): what the message was built from, it, and what it "
        "influenced, with an arrow along every provenance edge.",
    )
    def get(self, request, message_id: int):
        message = selectors.message_get(user=request.user, message_id=message_id)
        return Response(influence_svg(user=request.user, node_id=message.pk))
