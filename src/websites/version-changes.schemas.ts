import { type Static, Type } from 'typebox'
import { TextEditsField } from '../editing/editing.schemas.ts'
import { PublishFileSchema } from '../publishing/publishing.schemas.ts'

const changedPath = PublishFileSchema.properties.path

const PutChange = Type.Object(
  { op: Type.Literal('put'), ...PublishFileSchema.properties },
  {
    additionalProperties: false,
    description: 'Writes a file (new or replaced) given as a bundle file is: one of content, sha256 and uploadId.',
  },
)
const DeleteChange = Type.Object({ op: Type.Literal('delete'), path: changedPath }, { additionalProperties: false, description: 'Removes a file.' })
const MoveChange = Type.Object(
  { op: Type.Literal('move'), from: changedPath, to: changedPath },
  { additionalProperties: false, description: 'Renames a file; to must not exist.' },
)
const EditChange = Type.Object(
  { op: Type.Literal('edit'), path: changedPath, edits: TextEditsField },
  { additionalProperties: false, description: 'Changes a text file.' },
)

/**
 * One change of a patch, told apart by `op`: a discriminator, so that a bad change is checked
 * against the one shape its op names and the errors speak of that shape alone.
 */
export const VersionChangeSchema = Type.Unsafe<Static<typeof PutChange> | Static<typeof DeleteChange> | Static<typeof MoveChange> | Static<typeof EditChange>>({
  $id: 'VersionChange',
  type: 'object',
  oneOf: [PutChange, DeleteChange, MoveChange, EditChange],
  discriminator: { propertyName: 'op' },
  description: 'One change to the files: `put`, `delete`, `move` or `edit`.',
})

export type VersionChange = Static<typeof VersionChangeSchema>
