// A bot's questions on the chat page in real headless Chromium, against the run's stack: the bot asks through the
// Bot API, the visitor answers with the mouse and the keyboard, and the answer is what the Bot API's history reads;
// last, the echo bot asks and acknowledges the answers.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { apiUrl, call, newBot } from '../support/api';
import { until } from '../support/wait';
import { present, type Message } from '../support/contract';
import type { PageGlobals } from './page-globals';
import { freePort } from '../support/ports';
import { updateBot } from '../../lambdas/flows/bot-admin';
import { startEchoBot } from '../../examples/echo-bot';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let clientKey = '';
let auth: { authorization: string };
let botOf = { id: '', secretKey: '' };
let chatId = '';
const errors: string[] = [];

/** A tab of the visitor, once the page is ready; its uncaught errors collected. */
async function open(): Promise<Page> {
  const p = await ctx.newPage();
  p.on('pageerror', (e) => errors.push(e.message));
  await p.goto(`${apiUrl()}/?client_key=${clientKey}`);
  await p.waitForSelector('body[data-ready="true"]', { timeout: 15_000 });
  return p;
}

/** One visitor of a fresh bot, its page open, and its chat as the bot lists it. */
beforeAll(async () => {
  browser = await launchChromium();
  const { bot, secretKey } = await newBot();
  botOf = { id: bot.id, secretKey };
  clientKey = bot.client_key;
  auth = { authorization: `Bearer ${secretKey}` };
  ctx = await browser.newContext();
  page = await open();
  // The bot's chat list is an index: eventually consistent.
  await until(async () => {
    chatId = (await call('GET', '/api/bot/chats?limit=20', { headers: auth })).body.chats?.[0]?.id ?? '';
    return chatId !== '';
  }, 15_000, 'the chat in the bot’s list');
}, 30_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(() => expect(errors).toEqual([]));

/** The bot asks: a message of an interactive content_type, as the page then shows it. */
async function ask(content: string, content_type: string, content_attributes: object): Promise<Message> {
  const res = await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content, content_type, content_attributes } });
  expect(res.status).toBe(201);
  return res.body;
}

/** What the Bot API's history holds as the message's answer, once there is one. */
async function answerOf(id: string): Promise<unknown> {
  let answer: unknown;
  await until(async () => {
    const history = (await call('GET', `/api/bot/chats/${chatId}/messages`, { headers: auth })).body as Message[];
    answer = present(history.find((m) => m.id === id), 'the question').content_attributes?.submitted_values;
    return answer !== undefined;
  }, 10_000, 'the answer in the bot’s history');
  return answer;
}

const focusedName = (p: Page) => p.evaluate(() => (globalThis as unknown as PageGlobals & { document: { activeElement: { textContent: string } | null } }).document.activeElement?.textContent);

test('quick replies: a labelled group of buttons reached with Tab and answered with Enter; both tabs then show the choice pressed and every button disabled', async () => {
  const asked = await ask('Which topic?', 'input_select', { items: [{ title: 'Orders', value: 'orders' }, { title: 'Returns', value: 'returns' }] });
  const other = await open();
  const group = page.getByRole('group', { name: 'Which topic?' });
  await group.waitFor();
  await other.getByRole('group', { name: 'Which topic?' }).waitFor();
  expect(await group.getByRole('button').allTextContents()).toEqual(['Orders', 'Returns']);
  await group.getByRole('button', { name: 'Orders' }).focus();
  await page.keyboard.press('Tab');
  expect(await focusedName(page)).toBe('Returns');
  await page.keyboard.press('Enter');
  expect(await answerOf(asked.id)).toBe('returns');
  for (const p of [page, other]) {
    const shown = p.getByRole('group', { name: 'Which topic?' });
    await shown.getByRole('button', { name: 'Returns', pressed: true, disabled: true }).waitFor();
    await shown.getByRole('button', { name: 'Orders', pressed: false, disabled: true }).waitFor();
  }
  await other.close();
});

test('cards: the chat’s photo and a web image, a link that opens a new tab, and a postback answered with Space', async () => {
  const form = new FormData();
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'mug.png');
  form.append('chat_id', chatId);
  const photo = (await call('POST', '/api/bot/files', { headers: auth, body: form })).body as { id: string };
  const asked = await ask('Our mugs', 'cards', {
    items: [
      { title: 'Mug', description: 'White, 300 ml', media_url: photo.id, actions: [{ type: 'link', text: 'Details', uri: 'https://shop.example/mug' }] },
      { title: 'Cup', media_url: 'https://shop.example/cup.png', actions: [{ type: 'postback', text: 'Buy the cup', payload: 'CUP-1' }] },
    ],
  });
  const mug = page.getByRole('group', { name: 'Mug', exact: true });
  await mug.waitFor();
  expect(await mug.getByText('White, 300 ml').isVisible()).toBe(true);
  // The chat's photo is shown in its card (from its presigned URL), not again as an attachment.
  await page.waitForFunction(() => {
    const img = (globalThis as unknown as PageGlobals).document.querySelector('.card img[alt="Mug"]');
    return img?.complete && (img.naturalWidth ?? 0) > 0;
  });
  expect(await page.locator(`[data-id="${asked.id}"] img`).count()).toBe(2);
  expect(await page.getByRole('group', { name: 'Cup', exact: true }).getByRole('img', { name: 'Cup' }).getAttribute('src')).toBe('https://shop.example/cup.png');
  const link = mug.getByRole('link', { name: 'Details' });
  expect([await link.getAttribute('href'), await link.getAttribute('target'), await link.getAttribute('rel')]).toEqual(['https://shop.example/mug', '_blank', 'noopener']);
  const buy = page.getByRole('group', { name: 'Cup', exact: true }).getByRole('button', { name: 'Buy the cup' });
  await buy.focus();
  await page.keyboard.press('Space');
  expect(await answerOf(asked.id)).toEqual({ card: 1, payload: 'CUP-1' });
  await page.getByRole('button', { name: 'Buy the cup', pressed: true, disabled: true }).waitFor();
});

test('a form: labelled inputs of their type, kept as typed while a message above is edited; a bad e-mail refused by the browser, then by the server with a readable message; a good one stored and shown', async () => {
  const above = (await call('POST', `/api/bot/chats/${chatId}/messages`, { headers: auth, json: { content: 'One moment' } })).body as Message;
  const asked = await ask('Where can we reach you?', 'form', {
    items: [
      { name: 'name', label: 'Name', type: 'text', required: true },
      { name: 'email', label: 'E-mail', type: 'email', required: true },
      { name: 'size', label: 'Size', type: 'select', options: [{ title: 'Small', value: 's' }, { title: 'Large', value: 'l' }] },
    ],
  });
  const form = page.getByRole('form', { name: 'Where can we reach you?' });
  await form.waitFor();
  const email = form.getByLabel('E-mail');
  expect(await email.getAttribute('type')).toBe('email');
  expect(await form.getByLabel('Size').locator('option').allTextContents()).toEqual(['Choose…', 'Small', 'Large']);
  // Typing while the message above gets a newer version: the field keeps its text and the focus.
  await form.getByLabel('Name').focus();
  await page.keyboard.type('An');
  expect((await call('PATCH', `/api/bot/chats/${chatId}/messages/${above.id}`, { headers: auth, json: { content: 'One moment, please' } })).status).toBe(200);
  await page.getByText('One moment, please').waitFor();
  await page.keyboard.type('n');
  expect(await form.getByLabel('Name').inputValue()).toBe('Ann');
  await form.getByLabel('Size').selectOption('Large');
  // Not an address at all: the browser's own validation stops it, with its message.
  await email.fill('not-an-email');
  await form.getByRole('button', { name: 'Send' }).click();
  expect(await email.evaluate((el) => (el as unknown as { validationMessage: string }).validationMessage)).toMatch(/@/);
  // An address the browser takes but the server does not (no dot in its domain): the server's message, by the form.
  await email.fill('ann@example');
  await form.getByRole('button', { name: 'Send' }).click();
  const alert = form.getByRole('alert');
  await alert.waitFor();
  expect(await alert.textContent()).toBe('E-mail: must be an e-mail address (400)');
  expect(await email.getAttribute('aria-invalid')).toBe('true');
  await email.fill('ann@example.com');
  await form.getByRole('button', { name: 'Send' }).click();
  expect(await answerOf(asked.id)).toEqual({ name: 'Ann', email: 'ann@example.com', size: 'l' });
  await until(async () => (await form.getByLabel('E-mail').isDisabled()) && (await form.getByLabel('E-mail').inputValue()) === 'ann@example.com', 10_000, 'the answered form');
  expect(await form.getByLabel('Name').inputValue()).toBe('Ann');
  expect(await form.getByRole('button', { name: 'Send' }).count()).toBe(0);
});

test('a rating: five named stars and a comment; the rating is stored and shown once answered', async () => {
  const asked = await ask('How did we do?', 'input_csat', {});
  const form = page.getByRole('form', { name: 'How did we do?' });
  await form.waitFor();
  expect(await form.getByRole('group', { name: 'Rating' }).getByRole('button').evaluateAll((els) => els.map((e) => (e as unknown as { ariaLabel: string }).ariaLabel))).toEqual([
    '1 star',
    '2 stars',
    '3 stars',
    '4 stars',
    '5 stars',
  ]);
  await form.getByRole('button', { name: '4 stars' }).click();
  await form.getByLabel('Comment (optional)').fill('Quick help');
  await form.getByRole('button', { name: 'Send rating' }).click();
  expect(await answerOf(asked.id)).toEqual({ rating: 4, comment: 'Quick help' });
  await form.getByText('Rated 4 of 5').waitFor();
  await form.getByRole('button', { name: '4 stars', pressed: true, disabled: true }).waitFor();
});

test('with the echo bot: `menu` shows quick replies, a click gets "You chose …" and a second tab the choice disabled; the card\'s postback gets its words; `form` refuses a bad e-mail, then thanks; `rate` is stored and thanked', async () => {
  // The webhook is set only now: the tests above answer without a bot listening.
  const port = await freePort();
  const { bot } = await updateBot(botOf.id, { webhook_url: `http://127.0.0.1:${port}/webhook` });
  const echo = await startEchoBot({ port, apiUrl: apiUrl(), secretKey: botOf.secretKey, webhookSecret: bot.webhook_secret as string, thinkMs: 0, streamStepMs: 0, log: (l) => errors.push(l) });
  const send = async (text: string) => {
    await page.getByRole('textbox', { name: 'Message' }).fill(text);
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
  };
  try {
    await send('menu');
    const menu = page.getByRole('group', { name: 'What would you like to drink?' });
    await menu.waitFor();
    expect(await menu.getByRole('button').allTextContents()).toEqual(['Tea', 'Coffee', 'Juice']);
    await menu.getByRole('button', { name: 'Coffee' }).click();
    await page.getByText('You chose Coffee', { exact: true }).waitFor();
    await menu.getByRole('button', { name: 'Coffee', pressed: true, disabled: true }).waitFor();
    // The visitor's other tab shows the choice made, and no choice left.
    const other = await open();
    await other.getByRole('group', { name: 'What would you like to drink?' }).getByRole('button', { name: 'Coffee', pressed: true, disabled: true }).waitFor();
    expect(await other.getByRole('group', { name: 'What would you like to drink?' }).getByRole('button', { disabled: false }).count()).toBe(0);
    await other.close();

    await send('card');
    const card = page.getByRole('group', { name: 'The echo bot', exact: true });
    await card.waitFor();
    await page.waitForFunction(() => {
      const img = (globalThis as unknown as PageGlobals).document.querySelector('.card img[alt="The echo bot"]');
      return img?.complete && (img.naturalWidth ?? 0) > 0;
    });
    expect(await card.getByRole('link', { name: 'Read the API docs' }).getAttribute('href')).toBe(`${apiUrl()}/docs`);
    await card.getByRole('button', { name: 'Say hello' }).click();
    await page.getByText('You pressed Say hello (payload: hello)', { exact: true }).waitFor();

    // The form: a bad e-mail refused with a readable message (the server's, for one the browser takes), then a good one.
    await send('form');
    const form = page.getByRole('form', { name: 'Tell me who you are.' });
    await form.waitFor();
    await form.getByLabel('Name').fill('Ann');
    await form.getByLabel('E-mail').fill('ann@example');
    await form.getByRole('button', { name: 'Send' }).click();
    await form.getByRole('alert').waitFor();
    expect(await form.getByRole('alert').textContent()).toBe('E-mail: must be an e-mail address (400)');
    await form.getByLabel('E-mail').fill('ann@example.com');
    await form.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Thanks, Ann (ann@example.com)', { exact: true }).waitFor();

    // The rating: stored, as the Bot API's history reads it, and acknowledged.
    await send('rate');
    const rating = page.getByRole('form', { name: 'How did I do?' });
    await rating.waitFor();
    await rating.getByRole('button', { name: '5 stars' }).click();
    await rating.getByRole('button', { name: 'Send rating' }).click();
    await page.getByText('Thanks for rating 5/5', { exact: true }).waitFor();
    const history = (await call('GET', `/api/bot/chats/${chatId}/messages`, { headers: auth })).body as Message[];
    expect(history.find((m) => m.content === 'How did I do?')?.content_attributes?.submitted_values).toEqual({ rating: 5 });
  } finally {
    echo.closeAllConnections();
    echo.close();
  }
});
