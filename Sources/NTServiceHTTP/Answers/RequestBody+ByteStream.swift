import NTHTTPCore
import NTServiceStorage
import NTTourUseCases

// A request's body is the byte stream a blob store receives, its pooled buffers the batches.
extension RequestBody: ByteStream {}
extension BodyChunk: ByteBuffer {}
