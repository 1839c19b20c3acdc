import { existsSync, readFileSync } from 'node:fs';

/**
 * The JSON lines of a file another process appends to, parsed; other lines (a log's plain start-up
 * lines) are skipped. A line still being written (the file just created, or a write cut mid-line)
 * is left out until its newline lands.
 */
export function jsonLines<T = unknown>(file: string): T[] {
  if (!existsSync(file)) return [];
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);
}
