// Small DOM helpers the chat page and the widget share: an element with its text (never HTML), and the http(s) check
// every link and image goes through.

/** An element with its class and text (set as text, never as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls = '', text = ''): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
}

/**
 * Only http(s) addresses become a link or an image: never javascript: or data:. With no base (what a bot sent),
 * only an absolute address counts; the API's file URLs are read against the page.
 */
export function isWebUrl(url: string | null | undefined, base: string | undefined = location.href): url is string {
  try {
    return ['http:', 'https:'].includes(new URL(url ?? '', base).protocol);
  } catch {
    return false;
  }
}
