// One real synth: every function bundles with esbuild (no Docker), minified, with a source map, SDK inside.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { synthBundled } from '../support/shapes';
import { ROUTES, WS_ROUTES } from '../../lib/routes';
import { PUBLISHER } from '../../lib/consumers';
import { RUNTIME_CREDENTIAL_PROVIDERS } from '../../lib/bundling';
import { WEB_FILES } from '../../lib/web-build';

test('cdk synth bundles each handler (HTTP routes, WebSocket routes, publisher) into its own asset, and the hosted chat page and widget into theirs', () => {
  expect(PUBLISHER.entry).toMatch(/publish/);
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  try {
    synthBundled(outdir);
    const dirs = readdirSync(outdir).filter((d) => d.startsWith('asset.') && statSync(join(outdir, d)).isDirectory());
    const holding = (file: string) => dirs.filter((d) => readdirSync(join(outdir, d)).includes(file));
    // The hosted files (lib/stack-web.ts): the web build, exactly its files, and the deploy's config.json.
    const [webBuild, ...moreBuilds] = holding('widget.js');
    expect(moreBuilds).toEqual([]);
    expect(readdirSync(join(outdir, webBuild)).sort()).toEqual([...WEB_FILES].sort());
    expect(readFileSync(join(outdir, webBuild, 'widget.js'), 'utf8')).toContain('nexus-chat-widget');
    expect(readFileSync(join(outdir, webBuild, 'index.html'), 'utf8')).toContain('<script src="app.js"');
    expect(holding('config.json')).toHaveLength(1);
    // Every other directory but CDK's own bucket-deployment handler (Python) is one of our functions.
    const assets = dirs.filter((d) => d !== webBuild && !holding('config.json').includes(d) && !holding('index.py').includes(d));
    expect(assets).toHaveLength(ROUTES.length + WS_ROUTES.length + 6); // + publisher, webhook dispatcher and deliverer, upload completer, task worker, not-found
    for (const a of assets) {
      const code = readFileSync(join(outdir, a, 'index.js'), 'utf8');
      const lines = code.split('\n').length;
      expect({
        exportsHandler: /module\.exports=\{handler\}|exports\.handler/.test(code) || code.includes('handler'),
        // The SDK is bundled; only the credential chain's fallbacks (never used on Lambda) come from the
        // runtime (signature-v4-crt is an optional require in a try).
        requiresSdkFromRuntime: [...code.matchAll(/require\("(@(?:aws-sdk|smithy)\/[^"]+)"\)/g)]
          .map((m) => m[1])
          .some((name) => name !== '@aws-sdk/signature-v4-crt' && !RUNTIME_CREDENTIAL_PROVIDERS.includes(name)),
        hasSourceMap: readdirSync(join(outdir, a)).includes('index.js.map'),
        minified: code.length / lines > 500,
      }).toEqual({ exportsHandler: true, requiresSdkFromRuntime: false, hasSourceMap: true, minified: true });
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}, 120_000);
