// `npm run deploy -- --stage staging [--realtime false ...] [--dry-run] [-- <cdk deploy options>]`: a thin
// wrapper over `npx cdk deploy` that turns its options into context keys (lib/stack-config.ts), checked first,
// then moves the stage's data to this version's key layout if it is not there yet (docs/scale.md "Upgrading a stage").
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOOLEAN_KEYS, CONTEXT_KEYS, stackName, type ContextKey, type StackConfig } from '../lib/stack-config';
import { configsFromContext } from '../lib/stack-context';

const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (option: string) => option.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export const USAGE = `usage: npm run deploy -- --stage <name> [--<setting> <value> ...] [--dry-run] [-- <cdk deploy options>]
settings (docs/deploy.md): ${CONTEXT_KEYS.map((k) => `--${kebab(k)}`).join(', ')}
--dry-run prints the cdk command instead of running it; ${BOOLEAN_KEYS.map((k) => `--${kebab(k)}`).join(', ')} alone mean true.`;

export interface DeployCommand {
  command: string;
  args: string[];
  dryRun: boolean;
}

/** The cdk command for these options; throws a readable Error on a bad option or setting. */
export function deployCommand(argv: string[]): DeployCommand {
  return parseDeploy(argv).cmd;
}

function parseDeploy(argv: string[]): { cmd: DeployCommand; config: StackConfig; cdkOptions: string[] } {
  const context: Partial<Record<ContextKey, string>> = {};
  const cdkOptions: string[] = [];
  let dryRun = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      cdkOptions.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '--dry-run') {
      dryRun = true;
      continue;
    }
    const m = /^--([a-zA-Z][a-zA-Z-]*)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unexpected argument "${arg}" (cdk's own options go after --)`);
    const key = camel(m[1]) as ContextKey;
    if (!CONTEXT_KEYS.includes(key)) throw new Error(`unknown option --${m[1]} (cdk's own options go after --)`);
    if (key in context) throw new Error(`--${m[1]} is given twice`);
    let value = m[2];
    if (value === undefined) {
      const next = argv[i + 1];
      if (next !== undefined && !next.startsWith('--')) {
        value = next;
        i++;
      } else if (BOOLEAN_KEYS.includes(key)) value = 'true';
      else throw new Error(`--${m[1]} needs a value`);
    }
    context[key] = value;
  }
  if (!context.stage) throw new Error('--stage is required, e.g. --stage staging');
  if (context.stage.includes(',')) throw new Error('deploy one stage at a time');
  // The app's own checks, so a bad value fails here in one line rather than after cdk starts.
  const [config] = configsFromContext(context);
  const contextArgs = Object.entries(context).flatMap(([k, v]) => ['--context', `${k}=${v}`]);
  return { cmd: { command: 'npx', args: ['cdk', 'deploy', stackName(config.stage), ...contextArgs, ...cdkOptions], dryRun }, config, cdkOptions };
}

/**
 * After a deploy: the data move to this version's layout (flows/migrate.ts), run from here with the deploying
 * credentials (`npm run bot -- migrate --aws`); one read when the stage is at it already. Resumable: run again
 * (the same command) if it is stopped.
 */
function migrateAfterDeploy(config: StackConfig, outputsFile: string, cdkOptions: string[], env: NodeJS.ProcessEnv): number {
  const outputs = JSON.parse(readFileSync(outputsFile, 'utf8')) as Record<string, Record<string, string>>;
  const tableName = outputs[stackName(config.stage)]?.TableName;
  if (!tableName) throw new Error('the deploy printed no TableName output');
  const profile = cdkOptions[cdkOptions.indexOf('--profile') + 1];
  console.log(`> npm run bot -- migrate --aws (TABLE_NAME=${tableName} CHAT_LIST_SHARDS=${config.chatListShards})`);
  const moveEnv = { ...env, TABLE_NAME: tableName, CHAT_LIST_SHARDS: String(config.chatListShards), ...(cdkOptions.includes('--profile') && profile && { AWS_PROFILE: profile }) };
  return spawnSync('npx', ['tsx', join(__dirname, 'bot.ts'), 'migrate', '--aws'], { stdio: 'inherit', env: moveEnv }).status ?? 1;
}

/** The command as one shell line, quoted where needed. */
export const shellLine = ({ command, args }: DeployCommand) =>
  [command, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    process.exit(0);
  }
  let parsed: ReturnType<typeof parseDeploy>;
  try {
    parsed = parseDeploy(argv);
  } catch (err) {
    console.error(`Error: ${(err as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  const { cmd, config, cdkOptions } = parsed;
  if (cmd.dryRun) {
    console.log(shellLine(cmd));
    process.exit(0);
  }
  console.log(`> ${shellLine(cmd)}`);
  // Same quiet CLI as `npm run synth` (no telemetry, no version check); deploying itself of course talks to AWS.
  const env = { CDK_DISABLE_CLI_TELEMETRY: 'true', CDK_DISABLE_VERSION_CHECK: '1', ...process.env };
  const dir = mkdtempSync(join(tmpdir(), 'chat-deploy-'));
  const outputsFile = join(dir, 'outputs.json');
  const result = spawnSync(cmd.command, [...cmd.args, '--outputs-file', outputsFile], { stdio: 'inherit', env });
  const status = result.status === 0 ? migrateAfterDeploy(config, outputsFile, cdkOptions, env) : (result.status ?? 1);
  rmSync(dir, { recursive: true, force: true });
  process.exit(status);
}
