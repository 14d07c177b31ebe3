"""schemathesis extensions for toursd's contract test."""
import schemathesis


@schemathesis.serializer("application/offset+octet-stream")
def offset_octet_stream(ctx, value):
    """tus PATCH and creation-with-upload bodies: raw bytes, as application/octet-stream."""
    if isinstance(value, bytes):
        return {"data": value}
    return {"data": str(value).encode()}
