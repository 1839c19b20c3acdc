// The documents stay readable: none passes 300 lines (a longer one is split by topic, as docs/ is).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

test('README.md and every docs/*.md is at most 300 lines', () => {
  const documents = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];
  const long = documents.map((d) => [d, readFileSync(join(ROOT, d), 'utf8').split('\n').length] as const).filter(([, lines]) => lines > 300);
  expect(long).toEqual([]);
});
