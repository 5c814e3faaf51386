import type { Principal } from '../core/principal.ts'
import { validationFailed } from '../core/errors.ts'
import type { WebsiteAccess } from '../db/access.ts'
import type { AssetLibrary, LibraryAsset } from './asset-library.ts'
import type { ImportAssetRequest } from './assets.schemas.ts'

/** Reads the bytes of a caller's completed upload (the uploads module's readUpload). */
export interface UploadReader {
  readUpload(principal: Principal, uploadId: string): Promise<{ bytes: Buffer; filename: string | null }>
}

/** importAsset: one image into a site's library, by URL or from an upload. */
export class AssetsService {
  constructor(private readonly options: { access: WebsiteAccess; library: AssetLibrary; uploads: UploadReader }) {}

  async importAsset(principal: Principal, websiteId: string, input: ImportAssetRequest): Promise<LibraryAsset> {
    const site = await this.options.access.requireSite(principal, websiteId, 'edit')
    if ((input.url === undefined) === (input.uploadId === undefined)) {
      const why = input.url === undefined ? 'give either url or uploadId' : 'give url or uploadId, not both'
      throw validationFailed({ url: why, uploadId: why }, `Import one image: ${why}.`)
    }
    if (input.url !== undefined) return this.options.library.importFromUrl(site.id, null, input.url)
    return this.importUpload(principal, site.id, null, input.uploadId as string)
  }

  /**
   * A completed upload of the caller into a library of a website they may write (the site-wide
   * one when collectionId is null). Someone else's upload is unknown to them: VALIDATION_FAILED
   * on uploadId, as are an expired or incomplete upload and bytes that are not an accepted image.
   */
  async importUpload(principal: Principal, websiteId: string, collectionId: string | null, uploadId: string): Promise<LibraryAsset> {
    const upload = await this.options.uploads.readUpload(principal, uploadId)
    return this.options.library.importFromBytes(websiteId, collectionId, upload.bytes, { filename: upload.filename ?? undefined })
  }
}
