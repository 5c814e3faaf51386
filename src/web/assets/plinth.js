// Copy buttons on the token page. Pages work without this script; it only adds copying.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null
  if (!button) return
  const source = document.getElementById(button.getAttribute('data-copy') || '')
  if (!source) return
  try {
    await navigator.clipboard.writeText(source.textContent || '')
    button.setAttribute('data-copied', '')
    button.setAttribute('aria-label', 'Copied')
  } catch {
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = window.getSelection()
    selection?.removeAllRanges()
    selection?.addRange(range)
  }
})
