// The chat page (web/) and the widget (web/widget/) as the static files a host serves: esbuild bundles, no
// network. `npm run web:build` writes them to web/dist, the CDK stack builds them into its web asset at synth
// (lib/stack-web.ts), and the local stack builds the same bundles in memory (lib/local/web.ts).
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/** esbuild options of both bundles. */
export const WEB_BUILD = {
  bundle: true,
  minify: true,
  sourcemap: 'inline' as const,
  format: 'iife' as const,
  target: 'es2020',
};
/** The chat page's bundle, from web/ (app.js beside index.html). */
export const PAGE_ENTRY = 'app.ts';
/** The widget's bundle (web/widget/widget.ts, the client package inside), with no source map: every host page loads it. */
export const WIDGET_ENTRY = 'widget/widget.ts';
/** Files of web/ served as they are. */
export const WEB_STATIC = ['index.html', 'style.css'];
/** Every file a host serves: the page's bundle and its source map, the widget's bundle, and the static ones. */
export const WEB_FILES = ['app.js', 'app.js.map', 'widget.js', ...WEB_STATIC];

/** Writes every file of WEB_FILES into outdir (synchronous: CDK's local bundling calls it during synth). */
export function buildWebFiles(root: string, outdir: string): void {
  const web = join(root, 'web');
  mkdirSync(outdir, { recursive: true });
  const common = { ...WEB_BUILD, absWorkingDir: web, logLevel: 'error' as const };
  // Its source map in a file of its own: a browser fetches it only when its developer tools are open.
  buildSync({ ...common, entryPoints: [PAGE_ENTRY], sourcemap: 'linked', outfile: join(outdir, 'app.js') });
  buildSync({ ...common, entryPoints: [WIDGET_ENTRY], sourcemap: false, outfile: join(outdir, 'widget.js') });
  for (const f of WEB_STATIC) copyFileSync(join(web, f), join(outdir, f));
}
