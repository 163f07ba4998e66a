"""REST views of derived memory: the Memory panel's data and the rectify verb."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from . import derived


class FactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    content = serializers.CharField()
    sources = serializers.ListField(child=serializers.IntegerField())
    version = serializers.IntegerField()
    status = serializers.CharField(help_text="active | superseded")
    rectified = serializers.BooleanField()
    supersedes = serializers.IntegerField(allow_null=True)
    derivation = serializers.DictField()
    rebuilt_at = serializers.DateTimeField()


class SummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    conversation = serializers.IntegerField()
    content = serializers.CharField()
    sources = serializers.ListField(child=serializers.IntegerField())
    version = serializers.IntegerField()
    status = serializers.CharField()
    derivation = serializers.DictField()
    rebuilt_at = serializers.DateTimeField()


class MemorySerializer(serializers.Serializer):
    facts = FactSerializer(many=True)
    summaries = SummarySerializer(many=True)


class RectifySerializer(serializers.Serializer):
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)


class MemoryApi(APIView):
    @extend_schema(responses=MemorySerializer, description="Facts and summaries distilled from your messages.")
    def get(self, request):
        return Response(MemorySerializer(derived.memory_overview(user=request.user)).data)


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
        fact = derived.fact_rectify(user=request.user, fact_id=fact_id, content=data.validated_data["content"])
        row = next(f for f in derived.memory_overview(user=request.user)["facts"] if f["id"] == fact.pk)
        return Response(FactSerializer(row).data, status=status.HTTP_201_CREATED)


