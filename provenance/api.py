"""REST views of forgetting: parse, call one service or selector, render."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from . import selectors
from .forgetting import services
from .models import DeletionStatus
from .serializers import (
    ConfirmSerializer,
    ForgetPreviewRequestSerializer,
    ManifestSerializer,
    PreviewSerializer,
    RequestSummarySerializer,
)


class ForgetPreviewApi(APIView):
    @extend_schema(request=ForgetPreviewRequestSerializer, responses={201: PreviewSerializer})
    def post(self, request):
        data = ForgetPreviewRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        deletion = services.forget_preview(user=request.user, **data.validated_data)
        return Response(selectors.preview_data(request=deletion), status=status.HTTP_201_CREATED)


class ForgetConfirmApi(APIView):
    @extend_schema(request=ConfirmSerializer, responses=ManifestSerializer)
    def post(self, request, request_id):
        data = ConfirmSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        manifest = services.forget_confirm(user=request.user, request_id=request_id, **data.validated_data)
        return Response(selectors.manifest_data(user=request.user, manifest=manifest))


class ForgetListApi(APIView):
    @extend_schema(responses=RequestSummarySerializer(many=True))
    def get(self, request):
        return Response(RequestSummarySerializer(selectors.deletion_request_list(user=request.user), many=True).data)


class ForgetDetailApi(APIView):
    @extend_schema(responses=ManifestSerializer, description="The manifest once confirmed, else the preview.")
    def get(self, request, request_id):
        deletion = selectors.deletion_request_get(user=request.user, request_id=request_id)
        if deletion.status == DeletionStatus.COMPLETED:
            return Response(selectors.manifest_data(user=request.user, manifest=deletion.manifest))
        return Response(selectors.preview_data(request=deletion))


class ForgetCancelApi(APIView):
    @extend_schema(request=None, responses={204: None}, description="Abandon a preview; it can no longer be confirmed.")
    def post(self, request, request_id):
        services.forget_cancel(user=request.user, request_id=request_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
