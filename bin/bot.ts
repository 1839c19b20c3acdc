// `npm run bot -- <create|update|list> ...`: manage bots in the local stack's table, or a deployed one with --aws.
import { parseArgs } from 'node:util';
import { applyLocalEnv, dynamoEndpoint, localSettings } from '../lib/local/settings';

const USAGE = `Usage:
  npm run bot -- create --name <name> [--allowed-origin <origin>]... [--primary-color <#hex>]
                        [--multiple-chats true|false] [--attachments true|false] [--json] [--aws]
                        [--unread-reminder <seconds>|off] [--retention-days <days>|off]
  npm run bot -- update <bot_id> [--name <name>] [--enabled true|false] [--client-api true|false]
                        [--allowed-origin <origin>]... [--clear-allowed-origins] [--primary-color <#hex>]
                        [--multiple-chats true|false] [--attachments true|false] [--json] [--aws]
                        [--webhook-url <url>] [--clear-webhook]
                        [--identity-verification on|off] [--require-identity true|false]
                        [--unread-reminder <seconds>|off] [--retention-days <days>|off]
  npm run bot -- rotate-secret <bot_id> [--json] [--aws]
  npm run bot -- rotate-webhook-secret <bot_id> [--json] [--aws]
  npm run bot -- list [--json] [--aws]
  npm run bot -- migrate [--json] [--aws]

--webhook-url (https: to a public address; locally http://localhost too) prints the webhook signing
secret (whsec_...); --identity-verification on prints the identity secret (idsec_...) your server signs
external ids with; rotate-* print the new secret once.
--retention-days keeps messages and files that many days (1-3650; off: for ever); an update with it prints
the retention_task_id that re-dates what is stored (GET /api/bot/tasks/{task_id} follows it); setting the same
value again re-dates again (a failed task is done over).
migrate moves stored data to the key layout of this version (docs/scale.md "Upgrading a stage"), here and to
its end; nothing when the table is at it. With --aws, CHAT_LIST_SHARDS must be the stage's setting.

By default it talks to the local stack (npm start; same DATA_DIR/DYNAMODB_PORT/TABLE_NAME env).
With --aws it uses the table named by TABLE_NAME and the usual AWS credentials and region.`;

class UsageError extends Error {}

const { values: flags, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        enabled: { type: 'string' },
        'client-api': { type: 'string' },
        'allowed-origin': { type: 'string', multiple: true },
        'clear-allowed-origins': { type: 'boolean' },
        'primary-color': { type: 'string' },
        'multiple-chats': { type: 'string' },
        attachments: { type: 'string' },
        'webhook-url': { type: 'string' },
        'clear-webhook': { type: 'boolean' },
        'identity-verification': { type: 'string' },
        'require-identity': { type: 'string' },
        'unread-reminder': { type: 'string' },
        'retention-days': { type: 'string' },
        json: { type: 'boolean' },
        aws: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
})();

function bool(name: string): boolean | undefined {
  const raw = flags[name as keyof typeof flags] as string | undefined;
  if (raw === undefined) return undefined;
  if (raw !== 'true' && raw !== 'false') throw new UsageError(`--${name} must be true or false`);
  return raw === 'true';
}

function origins(): string[] | undefined {
  const list = flags['allowed-origin'];
  if (flags['clear-allowed-origins']) {
    if (list?.length) throw new UsageError('--clear-allowed-origins cannot be combined with --allowed-origin');
    return [];
  }
  if (!list) return undefined;
  return list.map((o) => {
    let origin: string | undefined;
    try {
      origin = new URL(o).origin;
    } catch {
      origin = undefined;
    }
    // An Origin header is exactly scheme://host[:port]: no path, no trailing slash.
    if (!origin || origin === 'null' || origin !== o) {
      throw new UsageError(`--allowed-origin "${o}" must be an origin like https://example.com (no path or trailing slash)`);
    }
    return origin;
  });
}

function settingsFromFlags() {
  const color = flags['primary-color'];
  if (color !== undefined && !/^#[0-9a-fA-F]{6}$/.test(color)) throw new UsageError('--primary-color must look like #1a2b3c');
  const widget = {
    ...(color !== undefined && { primary_color: color }),
    ...(bool('multiple-chats') !== undefined && { multiple_chats: bool('multiple-chats') }),
    ...(bool('attachments') !== undefined && { attachments: bool('attachments') }),
  };
  const idFlag = flags['identity-verification'];
  if (idFlag !== undefined && idFlag !== 'on' && idFlag !== 'off') throw new UsageError('--identity-verification must be on or off');
  const identity = idFlag === undefined ? undefined : idFlag === 'on';
  const hook = flags['webhook-url'];
  if (hook !== undefined && flags['clear-webhook']) throw new UsageError('--webhook-url cannot be combined with --clear-webhook');
  if (hook !== undefined && !/^https?:\/\/[^\s]+$/.test(hook)) throw new UsageError('--webhook-url must be an http(s) URL');
  const reminder = flags['unread-reminder'];
  if (reminder !== undefined && reminder !== 'off' && !(/^\d+$/.test(reminder) && Number(reminder) >= 1 && Number(reminder) <= 900)) {
    throw new UsageError(`--unread-reminder must be a whole number of seconds from 1 to 900, or off: "${reminder}"`);
  }
  const retention = flags['retention-days'];
  if (retention !== undefined && retention !== 'off' && !(/^\d+$/.test(retention) && Number(retention) >= 1 && Number(retention) <= 3650)) {
    throw new UsageError(`--retention-days must be a whole number of days from 1 to 3650, or off: "${retention}"`);
  }
  if (flags.name !== undefined && (flags.name.trim() === '' || flags.name.length > 200)) {
    throw new UsageError('--name must be 1 to 200 characters');
  }
  return {
    name: flags.name,
    enabled: bool('enabled'),
    client_api_enabled: bool('client-api'),
    allowed_origins: origins(),
    widget,
    webhook_url: flags['clear-webhook'] ? null : hook,
    identity_verification: identity,
    require_identity: bool('require-identity'),
    unread_reminder_seconds: reminder === undefined ? undefined : reminder === 'off' ? null : Number(reminder),
    retention_days: retention === undefined ? undefined : retention === 'off' ? null : Number(retention),
  };
}

/** What the commands print; `update` adds the id of the retention task a new window starts. */
export type BotView = ReturnType<typeof view> & { retention_task_id?: string };

function view(bot: import('../lambdas/entities/bots').Bot, secretKey?: string, showWebhookSecret = false, showIdentitySecret = false) {
  return {
    bot_id: bot.id,
    client_key: bot.client_key,
    ...(secretKey && { secret_key: secretKey }),
    webhook_url: bot.webhook_url ?? null,
    ...(showWebhookSecret && bot.webhook_secret && { webhook_secret: bot.webhook_secret }),
    identity_verification: Boolean(bot.identity_secret),
    require_identity: Boolean(bot.require_identity),
    unread_reminder_seconds: bot.unread_reminder_seconds ?? null,
    retention_days: bot.retention_days ?? null,
    ...(showIdentitySecret && bot.identity_secret && { identity_secret: bot.identity_secret }),
    name: bot.name,
    enabled: bot.enabled,
    client_api_enabled: bot.client_api_enabled,
    allowed_origins: bot.allowed_origins,
    widget: bot.widget,
    created_at: bot.created_at,
    updated_at: bot.updated_at,
  };
}

function print(v: BotView): void {
  if (flags.json) return console.log(JSON.stringify(v));
  for (const [k, val] of Object.entries(v)) console.log(`${k.padEnd(18)} ${typeof val === 'object' ? JSON.stringify(val) : val}`);
  if (v.secret_key) console.log('\nThe secret key is shown only now; it is stored hashed.');
  if (v.webhook_secret) console.log('Verify each webhook with the webhook secret (see docs/bot-api.md "Webhooks").');
}

async function main(): Promise<void> {
  const [command, ...rest] = positionals;
  if (flags.help || !command) {
    console.log(USAGE);
    return;
  }
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (flags.aws) {
    if (!process.env.TABLE_NAME) throw new UsageError('--aws needs TABLE_NAME (the stack output TableName)');
    // A deployed stage's webhooks never go to loopback: the local stack's setting does not apply here.
    process.env.WEBHOOK_ALLOW_LOOPBACK = 'off';
    // Credentials and region come from the SDK's default chain (environment, AWS_PROFILE and its SSO or role, ...).
  } else {
    applyLocalEnv(localSettings());
  }
  // Imported after the environment is set: the core reads its configuration once.
  const bots = { ...(await import('../lambdas/flows/bot-admin')), ...(await import('../lambdas/entities/bots')) };
  switch (command) {
    case 'create': {
      const settings = settingsFromFlags();
      if (!settings.name) throw new UsageError('create needs --name <name>');
      if (settings.enabled !== undefined || settings.client_api_enabled !== undefined) {
        throw new UsageError('create makes an enabled bot; use update to switch it off');
      }
      if (settings.webhook_url !== undefined || settings.identity_verification !== undefined || settings.require_identity !== undefined) {
        throw new UsageError('set webhooks and identity verification with update once the bot exists');
      }
      const { bot, secretKey } = await bots.createBot({ ...settings, name: settings.name });
      return print(view(bot, secretKey));
    }
    case 'update': {
      const [botId] = rest;
      if (!botId) throw new UsageError('update needs <bot_id>');
      const settings = settingsFromFlags();
      const { bot } = await bots.updateBot(botId, settings);
      const v: BotView = view(bot, undefined, typeof settings.webhook_url === 'string', settings.identity_verification === true);
      // The stream's record of this change starts the task under this id (lambdas/flows/retention-task.ts).
      if (settings.retention_days !== undefined) {
        v.retention_task_id = (await import('../lambdas/flows/retention-task')).retentionTaskId(bot.id, bot.updated_at);
      }
      return print(v);
    }
    case 'rotate-secret':
    case 'rotate-webhook-secret': {
      const [botId] = rest;
      if (!botId) throw new UsageError(`${command} needs <bot_id>`);
      const webhook = command === 'rotate-webhook-secret';
      const { bot, secretKey } = await bots.updateBot(botId, {}, webhook ? { webhookSecret: true } : { secretKey: true });
      return print(view(bot, secretKey, webhook));
    }
    case 'list': {
      const list = (await bots.listBots()).map((b) => view(b));
      if (flags.json) return console.log(JSON.stringify({ bots: list }));
      if (list.length === 0) return console.log('No bots.');
      for (const b of list) console.log(`${b.bot_id}  ${b.client_key}  enabled=${b.enabled}  client_api=${b.client_api_enabled}  ${b.name}`);
      return;
    }
    case 'migrate': {
      if (flags.aws && !process.env.CHAT_LIST_SHARDS) throw new UsageError('migrate --aws needs CHAT_LIST_SHARDS (the stage\'s chatListShards setting)');
      const task = await (await import('../lambdas/flows/migrate')).migrateHere();
      if (flags.json) return console.log(JSON.stringify({ task_id: task?.task_id ?? null, status: task?.status ?? 'current' }));
      return console.log(task ? `Data moved (task ${task.task_id}: ${task.status}).` : 'The table is at the current layout: nothing to move.');
    }
    default:
      throw new UsageError(`Unknown command "${command}"`);
  }
}

main().catch((err: Error & { code?: string; name?: string }) => {
  if (err instanceof UsageError) {
    console.error(`${err.message}\n\n${USAGE}`);
    process.exit(2);
  }
  const refused = err.code === 'ECONNREFUSED' || /ECONNREFUSED/.test(String(err.message) + String((err as { cause?: unknown }).cause));
  if (refused && !flags.aws) {
    console.error(`The local stack is not running (nothing answers at ${dynamoEndpoint(localSettings())}): start it with \`npm start\`.`);
  } else if (err.name === 'ResourceNotFoundException') {
    console.error(`The table ${process.env.TABLE_NAME} does not exist${flags.aws ? '' : ' yet: start the local stack once with `npm start`'}.`);
  } else if (err.name === 'NotFoundError') {
    console.error(err.message);
  } else if (err.name === 'InvalidInputError') {
    console.error(err.message); // e.g. a webhook URL the address rule refuses, naming the rule
    process.exit(2);
  } else {
    console.error(`bot: ${err.message}`);
  }
  process.exit(1);
});
