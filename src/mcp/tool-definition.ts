/**
 * What a module declares to offer an operation as an MCP tool: the same schemas and the same
 * service call as its REST route. Each module keeps its tools in its own `*.tools.ts`; the MCP
 * server knows nothing of them beyond this shape.
 */
import { type Static, type TProperties, type TSchema, Type } from 'typebox'
import type { Principal } from '../core/principal.ts'
import type { ToolsetName } from './toolsets.ts'

/** All four hints, always set explicitly: clients assume the worst for a hint left out. */
export interface ToolHints {
  /** Reads only; changes nothing. */
  readOnlyHint: boolean
  /** May change what a live site serves (meaningful only when not read-only). */
  destructiveHint: boolean
  /** Calling it again with the same arguments changes nothing more. */
  idempotentHint: boolean
  /** Reaches beyond Plinth's own data (the web at large). */
  openWorldHint: boolean
}

export interface McpTool<In extends TSchema = TSchema, Out extends TSchema = TSchema> {
  name: string
  /** The group it is listed in: clients that do not choose it neither see nor call it (toolsets.ts). */
  toolset: ToolsetName
  title: string
  /** Written for agents: what it is for, when to use it, its rules and limits, what to do next. */
  description: string
  /** A TypeBox object schema (named schemas by ref(); they are inlined for MCP clients). */
  input: In
  /** The schema of the result, the same as the REST response's. */
  output: Out
  hints: ToolHints
  /** One service call. Throws AppError for business errors, like the service itself. */
  run(principal: Principal, input: Static<In>): Promise<Static<Out> | WithImages<Static<Out>>>
}

/** An image a tool's result shows the client, beside its structured value. */
export interface ToolImage {
  data: Buffer
  mimeType: 'image/png'
}

/** A tool's result with images: each becomes an image content item, before the value's text. */
export class WithImages<T> {
  constructor(
    readonly value: T,
    readonly images: readonly ToolImage[],
  ) {}
}

/** Keeps the input and output types of one tool tied to its schemas. */
export const defineTool = <In extends TSchema, Out extends TSchema>(tool: McpTool<In, Out>): McpTool<In, Out> => tool

/** Any module's tool, for the server's list (each was type-checked by defineTool). */
// A list of tools with different schemas; each was checked by defineTool.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyMcpTool = McpTool<any, any>

/** A tool's arguments: path and query parameters beside the body's fields; unknown ones are refused, as over REST. */
export const toolArgs = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false })

/** The hints of a tool that only reads. */
export const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }
