// The chat page's direct uploads in real headless Chromium against the running local stack: a phone-sized
// photo goes straight to the S3 emulator with a progress bar and arrives in the chat; a file over the
// maximum is refused with a readable message; an executable renamed .jpg is rejected by the checks, not sent.
// Code inside page.evaluate runs in the page: it reads the page's globals through test/browser/page-globals.ts.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl } from '../support/api';
import type { PageGlobals } from './page-globals';

/** The page as the upload tests instrument it: every value the progress bar showed. */
type Instrumented = PageGlobals & { progressSeen: number[] };

let browser: Browser;
let dir: string;
beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), 'chat-uploads-'));
});
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A file on disk (Chromium reads it itself): `head` then zeros up to `size` bytes. */
function fileOf(name: string, head: Buffer, size: number): string {
  const path = join(dir, name);
  writeFileSync(path, head);
  truncateSync(path, size);
  return path;
}

async function openChat(): Promise<{ page: Page; errors: string[] }> {
  const ctx = await browser.newContext();
  const page = await ctx.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${apiUrl()}/`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  // Every value the progress bar shows, recorded in the page.
  await page.evaluate(() => {
    const w = globalThis as unknown as Instrumented;
    w.progressSeen = [];
    const bar = w.document.getElementById('upload-progress')!;
    new w.MutationObserver(() => !bar.hidden && w.progressSeen.push(bar.value!)).observe(bar, { attributes: true });
    setInterval(() => !bar.hidden && w.progressSeen.push(bar.value!), 5);
  });
  return { page, errors };
}

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]);

test('a 20 MB photo goes up with a progress bar, straight to storage, and arrives in the chat', async () => {
  const { page, errors } = await openChat();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
  await page.setInputFiles('#file', fileOf('IMG_2041.jpg', JPEG, 20 * 1024 * 1024));
  await page.locator('.message.incoming img[alt="IMG_2041.jpg"]').waitFor({ timeout: 30_000 });
  await page.locator('.message.outcoming', { hasText: `Nice photo! I got IMG_2041.jpg (${20 * 1024 * 1024} bytes)` }).waitFor();
  // The bytes went to the bucket, not through the API; the bar moved and is gone.
  expect(requests).toContain('POST /api/client/files/uploads');
  expect(requests.some((r) => /^POST \/[^/]+\/?$/.test(r) && !r.startsWith('POST /api/'))).toBe(true);
  expect(requests).not.toContain('POST /api/client/files');
  const seen = await page.evaluate(() => (globalThis as unknown as Instrumented).progressSeen);
  expect(Math.max(...seen)).toBeGreaterThan(0);
  expect(await page.locator('#upload-progress').isHidden()).toBe(true);
  expect(errors).toEqual([]);
});

test('a 150 MB video is refused with a readable message; nothing is sent', async () => {
  const { page, errors } = await openChat();
  await page.setInputFiles('#file', fileOf('holiday.mp4', Buffer.from('\0\0\0\x18ftypmp42', 'latin1'), 150 * 1024 * 1024));
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toBe('Could not send holiday.mp4: size: a file may have at most 104857600 bytes (100 MB) (400)');
  expect(await page.locator('.message.incoming').count()).toBe(0);
  expect(errors).toEqual([]);
});

test('an executable renamed .jpg is uploaded, rejected by the checks with its reason shown, and not sent', async () => {
  const { page, errors } = await openChat();
  await page.setInputFiles('#file', fileOf('cat.jpg', Buffer.from('MZ\x90\x00\x03\x00', 'latin1'), 5 * 1024 * 1024));
  const alert = page.getByRole('alert');
  await alert.waitFor({ timeout: 30_000 });
  expect(await alert.textContent()).toBe('Could not send cat.jpg: cat.jpg was rejected: the file is an executable (Windows PE)');
  expect(await page.locator('.message.incoming').count()).toBe(0);
  expect(errors).toEqual([]);
});
