// The dashboard's drop area: a folder dropped (or chosen) is read here, skipped as `plinth deploy`
// skips (the same module), hashed with SubtleCrypto, and published sending only the files the
// server lacks: the rest go by sha256, large ones through upload URLs. A dropped or chosen .zip
// is sent to the form's own address, which unpacks it on the server. Without this script the
// form still publishes a .zip.
import ignore from './ignore.js'
import { IGNORE_FILE, MAX_FOLDER_ENTRIES, skipsPath } from './folder-skips.js'

/** Files at least this large go through an upload URL rather than inline in the publish (the deploy command's threshold). */
const UPLOAD_FROM_BYTES = 256 * 1024

for (const area of document.querySelectorAll('[data-deploy]')) setUp(area)

function setUp(area) {
  const form = area.querySelector('form')
  const zone = area.querySelector('[data-dropzone]')
  const folderInput = area.querySelector('[data-folder-input]')
  const zipInput = form.querySelector('input[name="bundle"]')
  const ui = statusOf(area)
  zone.hidden = false
  let busy = false
  const run = async (work) => {
    if (busy) return
    busy = true
    area.setAttribute('aria-busy', 'true')
    try {
      await work()
    } catch (error) {
      ui.fail(error.message || String(error), error.violations || [])
    } finally {
      busy = false
      area.removeAttribute('aria-busy')
    }
  }

  zone.addEventListener('dragover', (event) => {
    event.preventDefault()
    zone.classList.add('over')
  })
  zone.addEventListener('dragleave', () => zone.classList.remove('over'))
  zone.addEventListener('drop', (event) => {
    event.preventDefault()
    zone.classList.remove('over')
    run(async () => {
      const dropped = await droppedFiles(event.dataTransfer)
      if (dropped.length === 1 && /\.zip$/i.test(dropped[0].path) && !dropped[0].path.includes('/')) return sendZip(form, dropped[0].file, ui)
      return deployFolder(area, form, dropped, ui)
    })
  })
  area.querySelector('[data-choose-folder]').addEventListener('click', () => folderInput.click())
  folderInput.addEventListener('change', () => {
    const files = [...folderInput.files].map((file) => ({ path: withoutTop(file.webkitRelativePath || file.name), file }))
    folderInput.value = ''
    run(() => deployFolder(area, form, files, ui))
  })
  form.addEventListener('submit', (event) => {
    const zip = zipInput.files[0]
    if (!zip) return
    event.preventDefault()
    run(() => sendZip(form, zip, ui))
  })
}

/** The progress bar, the status line and the list of problems of one drop area. */
function statusOf(area) {
  const box = area.querySelector('[data-deploy-status]')
  const bar = box.querySelector('progress')
  const percent = box.querySelector('[data-progress-text]')
  const message = box.querySelector('[data-deploy-message]')
  const errors = box.querySelector('[data-deploy-errors]')
  return {
    say(text) {
      box.hidden = false
      errors.hidden = true
      message.textContent = text
    },
    progress(fraction) {
      const value = Math.min(100, Math.round(fraction * 100))
      bar.value = value
      percent.textContent = `${value}%`
    },
    fail(text, violations) {
      box.hidden = false
      message.textContent = ''
      errors.hidden = false
      errors.querySelector('p').textContent = text
      const list = errors.querySelector('ul')
      list.replaceChildren(
        ...violations.map((violation) => {
          const item = document.createElement('li')
          if (violation.path) {
            const code = document.createElement('code')
            code.textContent = violation.path
            item.append(code, ': ')
          }
          item.append(violation.message)
          return item
        }),
      )
      errors.focus()
    },
  }
}

/** `site/assets/app.js` as the folder input names it, without the chosen folder's own name. */
const withoutTop = (path) => (path.includes('/') ? path.slice(path.indexOf('/') + 1) : path)

/** What was dropped, as files with bundle paths: a folder's contents (read through its entries), or loose files. */
async function droppedFiles(transfer) {
  const entries = [...transfer.items].map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null)).filter(Boolean)
  if (entries.length === 0) return [...transfer.files].map((file) => ({ path: withoutTop(file.webkitRelativePath || file.name), file }))
  // One folder dropped: its contents are the site. Several things: they are.
  if (entries.length === 1 && entries[0].isDirectory) return walk(entries[0], '')
  const files = []
  for (const entry of entries) files.push(...(entry.isDirectory ? await walk(entry, `${entry.name}/`) : [{ path: entry.name, file: await fileOf(entry) }]))
  return files
}

async function walk(folder, prefix, seen = { entries: 0 }) {
  const files = []
  const reader = folder.createReader()
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject))
    if (batch.length === 0) return files
    for (const entry of batch) {
      if (++seen.entries > MAX_FOLDER_ENTRIES) throw new Error(tooMany())
      if (entry.isDirectory) files.push(...(await walk(entry, `${prefix}${entry.name}/`, seen)))
      else files.push({ path: `${prefix}${entry.name}`, file: await fileOf(entry) })
    }
  }
}

const fileOf = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject))
const tooMany = () => `The folder holds more than ${MAX_FOLDER_ENTRIES} entries: drop the folder your build writes (dist/, public/, _site/), not the project.`

async function deployFolder(area, form, listed, ui) {
  if (listed.length > MAX_FOLDER_ENTRIES) throw new Error(tooMany())
  const ignoreFile = listed.find((entry) => entry.path === IGNORE_FILE)
  const rules = ignore().add(ignoreFile ? await ignoreFile.file.text() : '')
  const files = listed.filter((entry) => !skipsPath(entry.path, rules)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  if (files.length === 0) throw new Error('Nothing to publish: the folder is empty, or everything in it is skipped.')
  ui.progress(0)

  // Hashed here, when the browser offers SubtleCrypto (https, or localhost); otherwise every file is sent.
  const hashing = globalThis.crypto && crypto.subtle
  if (hashing) {
    for (const [i, entry] of files.entries()) {
      ui.say(`Checking ${i + 1} of ${files.length} files…`)
      entry.sha256 = hex(await crypto.subtle.digest('SHA-256', await entry.file.arrayBuffer()))
    }
  }
  const call = (url, body) => request('POST', url, JSON.stringify(body), { 'content-type': 'application/json' }, form)
  const missing = new Set(hashing ? (await call('/dashboard/deploy/missing', { hashes: files.map((entry) => entry.sha256) })).missing : [])
  const maxFileBytes = Number(area.dataset.maxFileBytes)
  const sending = files.filter((entry) => !hashing || missing.has(entry.sha256))
  const large = sending.filter((entry) => entry.file.size >= UPLOAD_FROM_BYTES && entry.file.size <= maxFileBytes)

  const bundle = new Map()
  for (const entry of files) if (!sending.includes(entry)) bundle.set(entry.path, { path: entry.path, sha256: entry.sha256 })
  for (const entry of sending)
    if (!large.includes(entry)) bundle.set(entry.path, { path: entry.path, content: await base64(entry.file), contentEncoding: 'base64' })
  const reused = files.length - sending.length
  const publish = area.dataset.publish
  const body = { ...fieldsOf(form), files: files.map((entry) => bundle.get(entry.path)) }
  // Progress counts every byte sent: the large files' uploads, then the publish itself.
  const total =
    large.reduce((sum, entry) => sum + entry.file.size, 0) +
    2048 +
    [...bundle.values()].reduce((sum, file) => sum + (file.content ? file.content.length : 0), 0)
  let done = 0
  ui.say(`Sending ${sending.length} of ${files.length} files (${reused} already on the server)…`)
  if (large.length > 0) {
    const { uploads } = await call('/dashboard/deploy/uploads', {
      files: large.map((entry) => ({ filename: entry.path.split('/').pop(), size: entry.file.size })),
    })
    for (const [i, entry] of large.entries()) {
      const upload = uploads[i]
      await request('PUT', upload.uploadUrl, entry.file, upload.headers, null, (sent) => ui.progress((done + sent) / total))
      done += entry.file.size
      bundle.set(entry.path, { path: entry.path, uploadId: upload.uploadId })
    }
    body.files = files.map((entry) => bundle.get(entry.path))
  }
  const json = JSON.stringify(body)
  const answer = await request('POST', publish, json, { 'content-type': 'application/json' }, form, (sent) =>
    ui.progress((done + (sent / json.length) * (total - done)) / total),
  )
  finish(answer, ui)
}

/** The new site's name and category, or the version's message and whether it goes live, from the form. */
function fieldsOf(form) {
  const data = new FormData(form)
  const fields = {}
  for (const name of ['name', 'category', 'message']) {
    const value = String(data.get(name) ?? '').trim()
    if (value !== '') fields[name] = value
  }
  if (form.querySelector('input[name="promote"]')) fields.promote = data.get('promote') === 'true'
  return fields
}

async function sendZip(form, zip, ui) {
  const data = new FormData(form)
  data.set('bundle', zip, zip.name)
  ui.progress(0)
  ui.say(`Sending ${zip.name}…`)
  finish(await request('POST', form.action, data, {}, form, (sent) => ui.progress(sent / zip.size)), ui)
}

function finish(answer, ui) {
  ui.progress(1)
  ui.say(`Published version ${answer.version}. Opening it…`)
  location.assign(`${answer.versionPage}?done=deployed`)
}

/**
 * One call with upload progress (XMLHttpRequest: fetch reports none), answered with JSON. A call
 * to the dashboard carries the page's CSRF token; a refusal rejects with the envelope's message
 * and violations.
 */
function request(method, url, body, headers, form, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method, url)
    xhr.setRequestHeader('accept', 'application/json')
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    if (form) xhr.setRequestHeader('x-csrf-token', form.querySelector('input[name="_csrf"]').value)
    if (onProgress) xhr.upload.addEventListener('progress', (event) => onProgress(event.loaded))
    xhr.addEventListener('load', () => {
      let parsed
      try {
        parsed = JSON.parse(xhr.responseText)
      } catch {
        parsed = null
      }
      if (xhr.status >= 200 && xhr.status < 300 && parsed) return resolve(parsed)
      const error = new Error(parsed?.error?.message || `The server answered ${xhr.status}.`)
      error.violations = parsed?.error?.violations || Object.entries(parsed?.error?.fields || {}).map(([name, text]) => ({ message: `${name} ${text}` }))
      reject(error)
    })
    xhr.addEventListener('error', () => reject(new Error('The server could not be reached. Check your connection and try again.')))
    xhr.send(body)
  })
}

const hex = (buffer) => [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('')

async function base64(file) {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
