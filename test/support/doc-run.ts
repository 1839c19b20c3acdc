// The rules of test/e2e/doc-snippets.test.ts that need no stack of their own: the substitution of a block's
// placeholders, the checks of commands that cannot run in a test, a presigned upload's POST, a js/ts block run in Node.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import { transform } from 'esbuild';
import { deployCommand } from '../../bin/deploy';
import { apiUrl } from './http';
import { ROOT } from './local-process';
import { shCommands, type Block } from './doc-blocks';

export const where = (b: Block) => `${b.file}:${b.line}`;

export function local(code: string, keys: { client_key?: string; secret_key?: string } = {}): string {
  let out = code.replace(/https?:\/\/localhost:3000|localhost:3000|https:\/\/chat\.example\.com/g, apiUrl()).replace(/http:\/\/localhost:4569/g, process.env.S3_ENDPOINT as string);
  if (keys.client_key) out = out.replace(/cli_(\.\.\.|…)/g, keys.client_key);
  if (keys.secret_key) out = out.replace(/sk_…/g, keys.secret_key);
  return out;
}

/** The npm/npx commands of sh blocks without curl, checked (they cannot run in a test): what is wrong with them. */
export function checkCommands(blocks: Block[]): { problems: string[]; checked: number } {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const botUsage = /const USAGE = `([\s\S]*?)`;/.exec(readFileSync(join(ROOT, 'bin', 'bot.ts'), 'utf8'))?.[1] ?? '';
  const clientPkg = JSON.parse(readFileSync(join(ROOT, 'packages', 'client', 'package.json'), 'utf8')) as { name: string };
  const readerOf: Record<string, string> = { bot: 'bin/bot.ts', 'test:integration': 'test/stack/global-setup.ts' };
  const problems: string[] = [];
  let checked = 0;
  for (const b of blocks.filter((x) => !/(^|\s|\()curl /m.test(x.code))) {
    for (const c of shCommands(b.code).filter((x) => !x.text.startsWith('#'))) {
      const line = c.text.replace(/\s#\s.*$/, '');
      for (const part of line.split('&&').map((p) => p.trim())) {
        checked++;
        const assignments = /^(?:[A-Z_]+=(?:<[^>]*>|[^\s<])*\s+)*/.exec(part)?.[0] ?? '';
        const env = [...assignments.matchAll(/([A-Z_]+)=/g)].map((m) => m[1]);
        const cmd = part.slice(assignments.length);
        let reader: string | undefined;
        const run = /^npm (?:run (\S+)|(start|test))(?:\s+--\s+(.*))?$/.exec(cmd);
        if (run) {
          const script = run[1] ?? run[2];
          if (!pkg.scripts[script]) problems.push(`${where(b)}: no npm script "${script}"`);
          reader = readerOf[script];
          const args = run[3] ?? '';
          if (script === 'bot') {
            const sub = args.split(/\s+/)[0];
            if (!botUsage.includes(`npm run bot -- ${sub} `) && !botUsage.includes(`npm run bot -- ${sub}\n`)) problems.push(`${where(b)}: no bot subcommand "${sub}"`);
            for (const flag of args.match(/--[a-z][a-z-]*/g) ?? []) if (!botUsage.includes(`${flag} `) && !botUsage.includes(`${flag}]`)) problems.push(`${where(b)}: bin/bot.ts has no ${flag}`);
          }
          if (script === 'deploy') {
            try {
              deployCommand(args.split(/\s+/).filter(Boolean));
            } catch (err) {
              problems.push(`${where(b)}: npm run deploy -- ${args}: ${(err as Error).message}`);
            }
          }
        } else if (/^npm install( @\S+)?$/.test(cmd)) {
          const name = cmd.split(' ')[2];
          if (name && name !== clientPkg.name) problems.push(`${where(b)}: no package ${name} here (packages/client is ${clientPkg.name})`);
        } else if (/^npx tsx (\S+)$/.test(cmd)) {
          reader = cmd.split(' ')[2];
          if (!existsSync(join(ROOT, reader))) problems.push(`${where(b)}: no ${reader}`);
        } else problems.push(`${where(b)}: no rule for the command "${cmd}"`);
        for (const name of env) {
          if (!reader || !readFileSync(join(ROOT, reader), 'utf8').includes(name)) problems.push(`${where(b)}: ${reader ?? cmd} does not read ${name}`);
        }
      }
    }
  }
  return { problems, checked };
}

export interface Ticket {
  file: { id: string; size: number; mime_type: string; name: string };
  upload: { url: string; fields: Record<string, string> };
}

/** What a page does with a ticket (docs/uploads.md's js block, which the snippets test runs in Chromium): every field, then the file (a JPEG's head). */
export async function postUpload(ticket: Ticket): Promise<void> {
  const jpeg = Buffer.alloc(ticket.file.size, 7);
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]).copy(jpeg);
  const form = new FormData();
  for (const [k, v] of Object.entries(ticket.upload.fields)) form.append(k, v);
  form.append('file', new Blob([jpeg], { type: ticket.file.mime_type }), ticket.file.name);
  const res = await fetch(ticket.upload.url, { method: 'POST', body: form });
  if (res.status !== 204) throw new Error(`the upload's POST: ${res.status} ${await res.text()}`);
}

/**
 * Runs a js/ts block in Node: its imports taken from `modules`, `export` dropped, the names it declares at the
 * top returned (the test calls what a block defines, and closes what it opens).
 */
export async function runNode(b: Block, globals: Record<string, unknown>, modules: Record<string, Record<string, unknown>> = {}): Promise<Record<string, unknown>> {
  const code = b.code
    .replace(/^import \{([^}]+)\} from '([^']+)';$/gm, (_m, names: string, mod: string) => {
      if (!modules[mod]) throw new Error(`${where(b)}: no module "${mod}" in its rule`);
      return `const {${names}} = __modules[${JSON.stringify(mod)}];`;
    })
    .replace(/^export /gm, '');
  const names = [...code.matchAll(/^(?:const|let|(?:async )?function)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]);
  const source = `async function __block(__modules, ${Object.keys(globals).join(', ')}) {\n${code}\nreturn { ${names.join(', ')} };\n}`;
  const out = await transform(source, { loader: b.lang === 'ts' ? 'ts' : 'js', format: 'esm', target: 'node20' });
  const fn = runInThisContext(`(() => {\n${out.code}\nreturn __block;\n})()`) as (...a: unknown[]) => Promise<Record<string, unknown>>;
  return fn(modules, ...Object.values(globals));
}
