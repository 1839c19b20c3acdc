// The page's elements by id, and the two lines that tell the visitor what is happening: the status line and the
// error line (an API error's message, or any other failure's).
export const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function showError(err: unknown, doing: string): void {
  const el = $('error');
  const text = err instanceof Error ? err.message : String(err); // an ApiError's message is the contract's error
  el.textContent = `${doing}: ${text}`;
  el.hidden = false;
}

export const clearError = () => ($('error').hidden = true);

export function setStatus(text: string): void {
  $('status').textContent = text;
}
