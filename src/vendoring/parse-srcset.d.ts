// Types for @fisker/parse-srcset, which ships none: the HTML standard's srcset parsing algorithm.
declare module '@fisker/parse-srcset' {
  interface Candidate {
    url: string
    w?: number
    d?: number
    h?: number
  }
  export default function parseSrcset(input: string, options?: { logger?: { error: (message: string) => void } }): Candidate[]
}
