/** Types of folder-skips.js, the skip rules shared by the deploy command, `.zip` deploys and the dashboard's browser script. */

/** What skipsPath needs of an `ignore` instance. */
export interface IgnoreRules {
  ignores(path: string): boolean
}

export declare const IGNORE_FILE: string
export declare const MAX_FOLDER_ENTRIES: number
export declare function skipsName(name: string): boolean
export declare function skipsPath(path: string, rules: IgnoreRules | null): boolean
