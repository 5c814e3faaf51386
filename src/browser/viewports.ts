/** The windows pages are loaded in, in CSS pixels at one device pixel each: a screenshot is exactly this wide. */
import type { Viewport } from '../core/enums.ts'

export interface ViewportSize {
  width: number
  height: number
  /** A phone: touch, and a page's viewport meta tag applies. */
  mobile: boolean
}

export const VIEWPORT_SIZES: Readonly<Record<Viewport, ViewportSize>> = Object.freeze({
  desktop: { width: 1280, height: 800, mobile: false },
  mobile: { width: 390, height: 844, mobile: true },
})
