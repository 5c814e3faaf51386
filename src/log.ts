/**
 * The process logger: pino (Fastify's own), JSON lines. Created before anything else, so the
 * stores, the site server and the start-up itself log through the same logger as requests do.
 */
import { type DestinationStream, type Logger, pino } from 'pino'

export type { Logger }

/** A logger at `level` ('silent' logs nothing), writing to stdout unless told otherwise. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino({ level }, destination) : pino({ level })
}
