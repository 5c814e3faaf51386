// Pages work without this script; it only adds copying, and spares a reload from sending a form again.

// A page that answers a form (the new token) names the address a reload should ask for instead:
// reloading it would otherwise send the form again, and mint another token.
const reloadAddress = document.body.dataset.reloadAddress
if (reloadAddress && location.pathname !== reloadAddress) history.replaceState(null, '', reloadAddress)

// Copy buttons on the token page.
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
