// The fenced code blocks of the docs (test/e2e/doc-snippets.test.ts runs or checks each), and a bash session
// that runs a `sh` block's commands one at a time against the local stack.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './local-process';

export interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
  /** Its place among the blocks of its language in its file (README.md js#0), the key of a rule for it. */
  key: string;
}

export const DOC_FILES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'packages/client/README.md'];

export function docBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of DOC_FILES) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const seen = new Map<string, number>();
    for (let i = 0; i < lines.length; i++) {
      const open = /^```(\S*)\s*$/.exec(lines[i]);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
      if (end < 0) throw new Error(`${file}:${i + 1}: a code block is not closed`);
      const lang = open[1];
      const n = seen.get(lang) ?? 0;
      seen.set(lang, n + 1);
      blocks.push({ file, line: i + 1, lang, code: lines.slice(i + 1, end).join('\n'), key: `${file} ${lang}#${n}` });
      i = end;
    }
  }
  return blocks;
}

/** A sh block's commands: continuation lines joined, each with the comment lines (`# →`, `#    `) that follow it. */
export interface Command {
  text: string;
  /** What the docs say it prints (its inline comment and the `#` lines right under it). */
  says: string;
}

export function shCommands(code: string): Command[] {
  const out: Command[] = [];
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) continue;
    if (line.startsWith('#')) {
      // A comment under a command continues what it says (`# → {...` then `#    ...`); others are headings.
      const last = out.at(-1);
      if (last && /^#\s{2,}|^# →/.test(line) && lines[i - 1]?.trim() && !/^# \d+\./.test(line)) last.says += ' ' + line.replace(/^#\s*(→\s*)?/, '');
      else out.push({ text: line, says: '' });
      continue;
    }
    let text = line;
    while (text.endsWith('\\') && i + 1 < lines.length) text = text.slice(0, -1) + lines[++i].trim();
    const hash = text.search(/\s#\s/);
    out.push({ text, says: hash >= 0 ? text.slice(hash).replace(/^\s*#\s*(→\s*)?/, '') : '' });
  }
  return out;
}

/**
 * The `"key":value` pairs a command's comment shows with a literal value (no `…`), as the compact JSON the
 * service prints. Ids and instants are examples: a key `id`, `*_id` or `*_at` is checked for presence only.
 */
export function shownPairs(says: string): { key: string; literal?: string }[] {
  const pairs: { key: string; literal?: string }[] = [];
  for (const m of says.matchAll(/"([A-Za-z_-]+)":("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)/g)) {
    const [, key, value] = m;
    if (value.includes('…')) continue;
    pairs.push(key === 'id' || key.endsWith('_id') || key.endsWith('_at') ? { key } : { key, literal: value });
  }
  return pairs;
}

/** One bash process in a folder: commands run one at a time, so the test can look at each output in turn. */
export class Bash {
  private proc: ChildProcessWithoutNullStreams;
  private buf = '';
  private err = '';

  constructor(cwd: string, env: Record<string, string>) {
    this.proc = spawn('bash', ['--noprofile', '--norc'], { cwd, env: { ...process.env, ...env } });
    this.proc.stdout.on('data', (d: Buffer) => (this.buf += d.toString()));
    this.proc.stderr.on('data', (d: Buffer) => (this.err += d.toString()));
  }

  /** Runs one command; resolves with what it printed, its exit code and the status of its last curl. */
  run(command: string): Promise<{ out: string; code: number; status: number; stderr: string }> {
    this.buf = '';
    this.err = '';
    this.proc.stdin.write(`${command}\nprintf '\\n__DONE__ %s %s\\n' $? "$(cat "$PWD/.status" 2>/dev/null)"\n`);
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`no end to: ${command}\n${this.buf}\n${this.err}`)), 15_000);
      const poll = () => {
        const m = /\n__DONE__ (\d+) (\d*)\n$/.exec(this.buf);
        if (!m) return void setTimeout(poll, 10);
        clearTimeout(deadline);
        resolve({ out: this.buf.slice(0, m.index), code: Number(m[1]), status: Number(m[2] || 0), stderr: this.err });
      };
      poll();
    });
  }

  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}

/** Defined first in every sh session: curl as written, its HTTP status kept aside in .status for the test. */
export const CURL_STATUS = `curl() { local b; b=$(command curl -w '\\n%{http_code}' "$@"); local rc=$?; printf '%s' "\${b##*$'\\n'}" > "$PWD/.status"; printf '%s' "\${b%$'\\n'*}"; return $rc; }`;
