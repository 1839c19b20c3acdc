// `npm run web:build`: the chat page as static files in web/dist, to host anywhere (point it at a stack
// with ?api=<base URL>&client_key=<cli_...>), and widget.js (its script tag names the API with data-api-url).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildWeb, buildWidget } from '../lib/local/web';

const root = join(__dirname, '..');
const out = join(root, 'web', 'dist');
mkdirSync(out, { recursive: true });
void Promise.all([buildWeb(root, out), buildWidget(root, out)]).then(() => {
  for (const f of ['index.html', 'style.css']) copyFileSync(join(root, 'web', f), join(out, f));
  console.log(`chat page and widget.js written to ${out}`);
});
