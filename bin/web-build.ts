// `npm run web:build`: the chat page as static files in web/dist, to host anywhere (point it at a stack
// with ?api=<base URL>&client_key=<cli_...>), and widget.js (its script tag names the API with data-api-url).
// A deployed stack hosts the same files itself (docs/deploy.md "The chat page and the widget").
import { join } from 'node:path';
import { buildWebFiles } from '../lib/web-build';

const root = join(__dirname, '..');
const out = join(root, 'web', 'dist');
buildWebFiles(root, out);
console.log(`chat page and widget.js written to ${out}`);
