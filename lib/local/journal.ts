// A durable list of pending work in the data folder (the local queues' messages, S3 events not yet handled):
// a line is appended when an entry is added, before the sender is answered, and one when it is done. A restart
// reads back what was not done. appendFileSync hands each line to the OS at once, so a killed process loses
// none of them (only a crash of the machine could).
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

type Line<T> = { add: { id: string; value: T } } | { done: string };

/** Lines appended before the file is rewritten with only what is pending (when most of it is done work). */
const COMPACT_AFTER = 10_000;

export class Journal<T> {
  private readonly live = new Map<string, T>();
  private lines = 0;

  /**
   * Reads back what was pending at the last stop or crash, and rewrites the file with only that. With `shared`,
   * another process appends entries too (adopt() takes them): the file is then rewritten only here, at start.
   */
  constructor(
    private readonly file: string,
    private readonly shared = false,
  ) {
    mkdirSync(dirname(file), { recursive: true });
    if (existsSync(file)) {
      for (const text of readFileSync(file, 'utf8').split('\n')) {
        let line: Line<T>;
        try {
          line = JSON.parse(text) as Line<T>;
        } catch {
          continue; // an empty last line
        }
        if ('add' in line) this.live.set(line.add.id, line.add.value);
        else this.live.delete(line.done);
      }
    }
    this.compact();
  }

  /** What is pending, oldest first. */
  pending(): [id: string, value: T][] {
    return [...this.live];
  }

  add(entries: { id: string; value: T }[]): void {
    if (!entries.length) return;
    appendFileSync(this.file, entries.map((add) => JSON.stringify({ add }) + '\n').join(''));
    for (const e of entries) this.live.set(e.id, e.value);
    this.lines += entries.length;
  }

  /** An entry another process has written to the file. */
  adopt(id: string, value: T): void {
    this.live.set(id, value);
    this.lines++;
  }

  done(id: string): void {
    if (!this.live.delete(id)) return;
    appendFileSync(this.file, JSON.stringify({ done: id }) + '\n');
    if (++this.lines >= COMPACT_AFTER && this.live.size * 4 < this.lines && !this.shared) this.compact();
  }

  /** Atomically (a temporary file renamed over it): a crash meanwhile leaves the old file whole. */
  private compact(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, [...this.live].map(([id, value]) => JSON.stringify({ add: { id, value } }) + '\n').join(''));
    renameSync(tmp, this.file);
    this.lines = this.live.size;
  }
}
