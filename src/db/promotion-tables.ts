/** The tables of promotion requests and schedules (migration 0023). */
import type { PromotionRequestStatus, ScheduleKind, ScheduleStatus } from '../core/enums.ts'

export interface PromotionRequestsTable {
  id: string
  website_id: string
  version_id: string
  status: PromotionRequestStatus
  note: string | null
  requested_by: string
  created_at: string
  decided_by: string | null
  decided_at: string | null
  reason: string | null
}

export interface SchedulesTable {
  id: string
  website_id: string
  version_id: string
  kind: ScheduleKind
  run_at: string
  status: ScheduleStatus
  created_by: string
  created_at: string
  claim: string | null
  claimed_until: string | null
  finished_at: string | null
  error: string | null
}
