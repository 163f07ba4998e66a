"""REST views of derived memory: the Memory panel's data and the rectify verb."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from .facts import fact_rectify
from .preferences import memory_enabled, memory_preference_set
from .selectors import fact_detail, memory_overview
from .serializers import FactSerializer, MemorySerializer, MemorySettingsSerializer, RectifySerializer


class MemoryApi(APIView):
    @extend_schema(responses=MemorySerializer, description="Facts and summaries distilled from your messages.")
    def get(self, request):
        return Response(MemorySerializer(memory_overview(user=request.user)).data)


class FactRectifyApi(APIView):
    @extend_schema(
        request=RectifySerializer,
        responses={201: FactSerializer},
        description="Correct a fact: the old version is superseded (kept as history, never used again). "
        "To erase a fact, use /api/forget/preview/ with mode 'ids'.",
    )
    def post(self, request, fact_id: int):
        data = RectifySerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fact = fact_rectify(user=request.user, fact_id=fact_id, content=data.validated_data["content"])
        row = fact_detail(user=request.user, fact_id=fact.pk)
        return Response(FactSerializer(row).data, status=status.HTTP_201_CREATED)


class MemorySettingsApi(APIView):
    @extend_schema(responses=MemorySettingsSerializer, description="Whether your memory is on.")
    def get(self, request):
        return Response({"enabled": memory_enabled(user=request.user)})

    @extend_schema(request=MemorySettingsSerializer, responses=MemorySettingsSerializer,
                   description="Turn your memory on or off.")
    def put(self, request):
        data = MemorySettingsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response({"enabled": memory_preference_set(user=request.user, enabled=data.validated_data["enabled"])})

    patch = put
