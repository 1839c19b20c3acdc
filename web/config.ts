// Where the chat page's API is and which bot it talks to: ?api=<base URL>&client_key=<cli_...> on the URL, else
// config.json beside the page; and a visitor id an older page stored under the client key alone, moved once.
import { ApiError } from '../packages/client/src';

export async function loadConfig(): Promise<{ api: string; clientKey: string }> {
  const q = new URLSearchParams(location.search);
  let file: { api_url?: string; client_key?: string } = {};
  if (!q.get('api') || !q.get('client_key')) {
    try {
      const res = await fetch('config.json', { cache: 'no-store' });
      if (res.ok) file = (await res.json()) as typeof file;
    } catch {
      /* no config file: the query string must say it all */
    }
  }
  const api = (q.get('api') ?? file.api_url ?? location.origin).replace(/\/+$/, '');
  const clientKey = q.get('client_key') ?? file.client_key;
  if (!clientKey) throw new ApiError(0, 'This page needs a client key: open it with ?client_key=cli_… (and ?api=<base URL>).');
  moveLegacyVisitor(api, clientKey);
  return { api, clientKey };
}

/**
 * An id stored before ids were kept per API address goes, once, to the API the page is now used with (a hosted
 * page names it in its link), under the key the client package keeps visitors by.
 */
function moveLegacyVisitor(api: string, clientKey: string): void {
  const legacyKey = `chat.external_id:${clientKey}`;
  const legacy = localStorage.getItem(legacyKey);
  const key = `chat.external_id:${api}:${clientKey}`;
  if (legacy && !localStorage.getItem(key)) localStorage.setItem(key, legacy);
  localStorage.removeItem(legacyKey);
}
