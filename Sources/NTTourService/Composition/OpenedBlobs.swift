import NTServiceModel
import NTServiceStorage
import NTTourUseCases

/// The blob store a deployment's `Blobs` opened, as the type it is: the service's parts take
/// `store`; the composition gives the folder's or the bucket's own (their claim at start-up,
/// the bucket's sweep and shared previews) to those that need it, with no downcast.
enum OpenedBlobs {
    case folder(DirectoryBlobStore)
    case bucket(BucketBlobStore)

    var store: any BlobStore {
        switch self {
        case .folder(let folder): folder
        case .bucket(let bucket): bucket
        }
    }
}
