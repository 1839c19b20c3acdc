// A website for the docs' browser blocks (test/e2e/doc-snippets.test.ts): a second local server (another origin)
// serving pages the test writes, the client package's script-tag build at the path its README names and its ES
// module build for an import map, in one headless Chromium.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser';
import { ROOT } from './local-process';

export const SCRIPT_TAG_PATH = '/node_modules/@nexus-chat/client/dist/nexus-chat.min.js';
const MODULE_PATH = '/nexus-chat.mjs';
/** Where a page's `import ... from '@nexus-chat/client'` resolves: the package's ES module build. */
export const IMPORT_MAP = `<script type="importmap">{"imports":{"@nexus-chat/client":"${MODULE_PATH}"}}</script>`;

export class DocSite {
  origin = '';
  private constructor(
    private browser: Browser,
    private server: Server,
    private pages: Map<string, string>,
  ) {}

  static async start(): Promise<DocSite> {
    const entry = join(ROOT, 'packages', 'client', 'src', 'index.ts');
    const built = async (format: 'iife' | 'esm') =>
      (await build({ entryPoints: [entry], bundle: true, format, globalName: 'NexusChat', target: 'es2020', write: false, logLevel: 'silent' })).outputFiles[0].text;
    const [iife, esm, browser] = await Promise.all([built('iife'), built('esm'), launchChromium()]);
    const pages = new Map<string, string>();
    const server = createServer((req, res) => {
      const js = req.url === SCRIPT_TAG_PATH ? iife : req.url === MODULE_PATH ? esm : undefined;
      const html = pages.get(req.url ?? '');
      res.writeHead(js || html ? 200 : 404, { 'content-type': js ? 'text/javascript' : 'text/html; charset=utf-8' });
      res.end(js ?? html ?? '');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const site = new DocSite(browser, server, pages);
    site.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return site;
  }

  /** Opens a page of this site with this HTML; its errors are collected in `errors`. */
  async open(path: string, html: string): Promise<Page & { errors: string[] }> {
    this.pages.set(path, html);
    const page = (await (await this.browser.newContext()).newPage()) as Page & { errors: string[] };
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(e.message));
    await page.goto(this.origin + path);
    return page;
  }

  async close(): Promise<void> {
    await this.browser.close();
    await new Promise((r) => this.server.close(r));
  }
}
