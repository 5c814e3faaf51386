import { notFound, validationFailed } from '../core/errors.ts'
import type { Principal } from '../auth/tokens.service.ts'
import type { WebsitesRepository } from '../websites/websites.repository.ts'
import type { AssetLibrary, LibraryAsset } from './asset-library.ts'
import type { ImportAssetRequest } from './assets.schemas.ts'

/** Reads the bytes of a caller's completed upload (the uploads module's readUpload). */
export interface UploadReader {
  readUpload(principal: Principal, uploadId: string): Promise<{ bytes: Buffer; filename: string | null }>
}

/** importAsset: one image into a site's library, by URL or from an upload. */
export class AssetsService {
  constructor(
    private readonly websites: WebsitesRepository,
    private readonly library: AssetLibrary,
    private readonly uploads: UploadReader,
  ) {}

  async importAsset(principal: Principal, websiteId: string, input: ImportAssetRequest): Promise<LibraryAsset> {
    // Owners and editors alike; a site the caller cannot see does not exist for them.
    const site = await this.websites.findVisible(principal.userId, websiteId)
    if (!site) throw notFound('Website')
    if ((input.url === undefined) === (input.uploadId === undefined)) {
      const why = input.url === undefined ? 'give either url or uploadId' : 'give url or uploadId, not both'
      throw validationFailed({ url: why, uploadId: why }, `Import one image: ${why}.`)
    }
    if (input.url !== undefined) return this.library.importFromUrl(site.id, null, input.url)
    const upload = await this.uploads.readUpload(principal, input.uploadId as string)
    return this.library.importFromBytes(site.id, null, upload.bytes, { filename: upload.filename ?? undefined })
  }
}
