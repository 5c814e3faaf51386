/**
 * Finds the forms a page declares: every `<form method="post" action="/_forms/{name}">`, with the
 * fields that belong to it (its named inputs, selects and textareas, and those elsewhere in the
 * page that name it with `form="{id}"`). Controls (`_next`, `_gotcha`, any name starting with `_`)
 * and buttons are not fields. The page is parsed with parse5, as a browser parses it, and only
 * when its text names the forms path at all, so a site without forms pays nothing.
 */
import { parse, type DefaultTreeAdapterTypes as T } from 'parse5'
import { CONTROL_FIELD_PREFIX, FORM_PATH_PREFIX, formNameOfPath } from '../core/form-names.ts'
import { FORM_DECLARATION_LIMITS } from '../core/limits.ts'

export interface FormField {
  name: string
  /** `text`, `email`, `tel`, `date`, `file`, ... for inputs; `select` or `textarea` for those elements. */
  type: string
  required: boolean
}

export interface FormDeclaration {
  name: string
  fields: FormField[]
}

const FIELD_ELEMENTS = new Set(['input', 'select', 'textarea'])
const NOT_FIELDS = new Set(['submit', 'reset', 'button', 'image'])

const attr = (el: T.Element, name: string): string | null => el.attrs.find((a) => a.name === name)?.value ?? null

/** Whether a page's text may declare a form: the cheap test made before any parse. */
export const mayDeclareForms = (text: string): boolean => text.includes(FORM_PATH_PREFIX)

/** The forms one page declares, in document order (a name declared twice has its fields merged). */
export function formsOfPage(text: string): FormDeclaration[] {
  if (!mayDeclareForms(text)) return []
  const forms: Array<{ name: string; id: string | null; fields: FormField[] }> = []
  const owned: Array<{ formId: string; field: FormField }> = []
  const walk = (node: T.ParentNode, form: (typeof forms)[number] | null): void => {
    for (const child of node.childNodes) {
      if (!('tagName' in child)) continue
      let inside = form
      if (child.tagName === 'form' && form === null) {
        const method = (attr(child, 'method') ?? 'get').trim().toLowerCase()
        const name = formNameOfPath((attr(child, 'action') ?? '').trim())
        if (method === 'post' && name !== null) {
          inside = { name, id: attr(child, 'id'), fields: [] }
          forms.push(inside)
        }
      } else if (FIELD_ELEMENTS.has(child.tagName)) {
        const field = fieldOf(child)
        const formId = attr(child, 'form')
        if (field !== null && formId !== null) owned.push({ formId, field })
        else if (field !== null && inside !== null) inside.fields.push(field)
      }
      walk(child.tagName === 'template' ? (child as T.Template).content : child, inside)
    }
  }
  walk(parse(text), null)
  for (const { formId, field } of owned) forms.find((f) => f.id === formId)?.fields.push(field)
  return mergeForms(forms)
}

/** The forms of several pages as one list: by name, fields merged in order of first appearance, within the limits. */
export function mergeForms(forms: Iterable<FormDeclaration>): FormDeclaration[] {
  const byName = new Map<string, FormDeclaration>()
  for (const form of forms) {
    let merged = byName.get(form.name)
    if (merged === undefined) {
      if (byName.size >= FORM_DECLARATION_LIMITS.maxForms) continue
      byName.set(form.name, (merged = { name: form.name, fields: [] }))
    }
    for (const field of form.fields) {
      if (merged.fields.some((f) => f.name === field.name) || merged.fields.length >= FORM_DECLARATION_LIMITS.maxFields) continue
      merged.fields.push(field)
    }
  }
  return [...byName.values()]
}

function fieldOf(el: T.Element): FormField | null {
  const name = attr(el, 'name')
  if (name === null || name === '' || name.startsWith(CONTROL_FIELD_PREFIX) || name.length > FORM_DECLARATION_LIMITS.maxFieldNameChars) return null
  const type = el.tagName === 'input' ? (attr(el, 'type') ?? 'text').trim().toLowerCase() || 'text' : el.tagName
  if (NOT_FIELDS.has(type)) return null
  return { name, type: type.slice(0, 20), required: attr(el, 'required') !== null }
}
