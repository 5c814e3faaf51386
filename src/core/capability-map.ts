/**
 * The one table of what every operation needs of a token: each REST operation of `/v1` by its
 * operationId, each MCP tool by its name. A route or tool missing here is refused when the app is
 * built (auth/auth.routes.ts, mcp/mcp.server.ts), and test/core/capability-map.test.ts fails on it,
 * so a new operation cannot forget to say what it needs. docs/guide/tokens.md shows the same table.
 */
import type { CapabilityNeed } from './capabilities.ts'

/** REST operations (operationId) of `/v1`. */
export const REST_CAPABILITIES: Readonly<Record<string, CapabilityNeed>> = {
  getApiIndex: 'public',
  putUploadContent: 'public',

  listWebsites: 'read',
  getWebsite: 'read',
  listWebsiteVersions: 'read',
  getJob: 'read',
  suggestSlug: 'read',
  getVersionFile: 'read',
  diffWebsiteVersions: 'read',
  getPageScreenshot: 'read',
  getBrowserReport: 'read',
  getSiteTraffic: 'read',
  listDrafts: 'read',
  getDraft: 'read',
  readDraftFile: 'read',
  listCollections: 'read',
  getCollection: 'read',
  listEntries: 'read',
  getEntry: 'read',
  listPromotionRequests: 'read',
  getPromotionRequest: 'read',
  listSchedules: 'read',

  createDraft: 'preview',
  discardDraft: 'preview',
  moveDraftFile: 'preview',
  writeDraftFile: 'preview',
  editDraftFile: 'preview',
  deleteDraftFile: 'preview',
  updateDraft: 'preview',
  requestPromotion: 'preview',
  withdrawPromotionRequest: 'preview',
  setPreviewExpiry: 'preview',
  createWebsiteVersion: 'publish',
  publishDraft: 'publish',
  createUploads: 'files',

  createWebsite: 'create-site',
  promoteWebsiteVersion: 'promote',
  cancelSchedule: 'promote',

  createCollection: 'content',
  updateCollection: 'content',
  upsertEntries: 'content',
  putEntry: 'content',
  deleteEntry: 'content',
  importAsset: 'content',

  listForms: 'forms',
  listFormSubmissions: 'forms',
  exportFormSubmissions: 'forms',
  deleteFormSubmissions: 'forms',
  getFormSubmission: 'forms',
  markFormSubmission: 'forms',
  deleteFormSubmission: 'forms',
  getFormSubmissionFile: 'forms',
  getFormSettings: 'forms',
  eraseFormSubmissions: 'forms',

  setFormSettings: 'manage',
  deleteWebsite: 'manage',
  setWebsitePassword: 'manage',
  removeWebsitePassword: 'manage',
  createWebhook: 'manage',
  listWebhooks: 'manage',
  updateWebhook: 'manage',
  deleteWebhook: 'manage',
  listWebhookDeliveries: 'manage',
  redeliverWebhookDelivery: 'manage',
}

/** MCP tools, by name. */
export const TOOL_CAPABILITIES: Readonly<Record<string, CapabilityNeed>> = {
  list_websites: 'read',
  get_website: 'read',
  list_versions: 'read',
  get_job_status: 'read',
  suggest_slug: 'read',
  diff_versions: 'read',
  screenshot_page: 'read',
  get_site_traffic: 'read',
  list_files: 'read',
  read_file: 'read',
  list_collections: 'read',
  get_collection: 'read',
  list_entries: 'read',
  get_entry: 'read',
  get_promotion_request: 'read',
  list_schedules: 'read',

  start_draft: 'preview',
  write_file: 'preview',
  edit_file: 'preview',
  delete_file: 'preview',
  move_file: 'preview',
  discard_draft: 'preview',
  request_promotion: 'preview',
  withdraw_promotion_request: 'preview',
  publish_version: 'publish',
  publish_draft: 'publish',
  create_upload: 'files',

  publish_website: 'create-site',
  promote_version: 'promote',
  schedule_promotion: 'promote',
  cancel_schedule: 'promote',

  create_collection: 'content',
  update_collection: 'content',
  upsert_entries: 'content',
  put_entry: 'content',
  delete_entry: 'content',
  import_asset: 'content',

  list_forms: 'forms',
  list_form_submissions: 'forms',

  delete_website: 'manage',
  set_site_password: 'manage',
}

/** What a REST operation needs; throws when the table does not say (a programming error, caught at start). */
export function restNeed(operationId: string | undefined, where: string): CapabilityNeed {
  const need = operationId === undefined ? undefined : REST_CAPABILITIES[operationId]
  if (need === undefined) throw new Error(`${where} (operationId ${operationId ?? 'none'}) declares no capability in core/capability-map.ts`)
  return need
}

/** What an MCP tool needs; throws when the table does not say. */
export function toolNeed(name: string): CapabilityNeed {
  const need = TOOL_CAPABILITIES[name]
  if (need === undefined) throw new Error(`MCP tool ${name} declares no capability in core/capability-map.ts`)
  return need
}
