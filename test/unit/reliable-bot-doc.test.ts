// docs/reliable-bot.md shows the echo bot's retry helper: the excerpt must be the code as it is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

test("the retry code in docs/reliable-bot.md is examples/echo-bot.ts's own, word for word", () => {
  const doc = readFileSync(join(ROOT, 'docs', 'reliable-bot.md'), 'utf8');
  const excerpt = /```ts\n([\s\S]*?)\n```/.exec(doc)?.[1];
  expect(excerpt).toContain('export async function botApiCall(');
  const source = readFileSync(join(ROOT, 'examples', 'echo-bot.ts'), 'utf8');
  // Each paragraph of the excerpt (split at blank lines) appears as it is in the source.
  for (const part of (excerpt as string).split('\n\n')) expect(source).toContain(part);
});
