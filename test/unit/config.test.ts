// The functions' configuration as the environment gives it: defaults, and a value out of its range refused
// with the variable's name (at the first config(), so a function or `npm start` fails at once, not per request).
import { config, reloadConfig } from '../../lambdas/shared/config';

const NAMES = ['TABLE_NAME', 'MAX_UPLOAD_BYTES', 'RATE_MESSAGES_PER_MINUTE', 'WEBHOOK_ALLOW_LOOPBACK', 'AWS_LAMBDA_FUNCTION_NAME', 'MAX_OPEN_UPLOAD_BYTES', 'MAX_UPLOAD_BYTES_PER_DAY', 'UNSENT_FILE_TTL_SECONDS'];
const saved = Object.fromEntries(NAMES.map((k) => [k, process.env[k]]));
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  reloadConfig();
});

const withEnv = (vars: Record<string, string>) => {
  Object.assign(process.env, { TABLE_NAME: 'chat-test' }, vars);
  reloadConfig();
  return () => config();
};

test('the largest direct upload: 100 MB by default, 1 byte to 5 GB as the stack allows, anything else refused', () => {
  delete process.env.MAX_UPLOAD_BYTES;
  expect(withEnv({})().maxUploadBytes).toBe(100 * 1024 * 1024);
  expect(withEnv({ MAX_UPLOAD_BYTES: '1' })().maxUploadBytes).toBe(1);
  expect(withEnv({ MAX_UPLOAD_BYTES: String(5 * 1024 ** 3) })().maxUploadBytes).toBe(5 * 1024 ** 3);
  expect(withEnv({ MAX_UPLOAD_BYTES: '0' })).toThrow("MAX_UPLOAD_BYTES must be from 1 to 5368709120 (S3's 5 GB for one POST): 0");
  expect(withEnv({ MAX_UPLOAD_BYTES: '5368709121' })).toThrow('MAX_UPLOAD_BYTES must be from 1 to 5368709120');
  expect(withEnv({ MAX_UPLOAD_BYTES: '1.5' })).toThrow('Environment variable MAX_UPLOAD_BYTES must be a non-negative integer');
});

test('a limit that is not a whole number is refused by name; 0 turns a limit off', () => {
  expect(withEnv({ RATE_MESSAGES_PER_MINUTE: 'many' })).toThrow('Environment variable RATE_MESSAGES_PER_MINUTE must be a non-negative integer');
  expect(withEnv({ RATE_MESSAGES_PER_MINUTE: '0' })().limits.messagesPerMinute).toBe(0);
});

test('WEBHOOK_ALLOW_LOOPBACK: off unless set; a function running on Lambda refuses to start with it on', () => {
  delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  expect(withEnv({})().webhookAllowLoopback).toBe(false);
  expect(withEnv({ WEBHOOK_ALLOW_LOOPBACK: 'on' })().webhookAllowLoopback).toBe(true);
  expect(withEnv({ WEBHOOK_ALLOW_LOOPBACK: 'maybe' })).toThrow('WEBHOOK_ALLOW_LOOPBACK must be on or off, got "maybe"');
  expect(withEnv({ AWS_LAMBDA_FUNCTION_NAME: 'chat-webhook-deliver', WEBHOOK_ALLOW_LOOPBACK: 'on' })).toThrow(
    'WEBHOOK_ALLOW_LOOPBACK is for the local stack only; a deployed function refuses it',
  );
  expect(withEnv({ AWS_LAMBDA_FUNCTION_NAME: 'chat-webhook-deliver', WEBHOOK_ALLOW_LOOPBACK: 'off' })().webhookAllowLoopback).toBe(false);
});

test('the storage quota: 10 and 20 largest uploads by default; 0 (off) or room for one largest upload; unsent files kept 24 h', () => {
  for (const k of ['MAX_UPLOAD_BYTES', 'MAX_OPEN_UPLOAD_BYTES', 'MAX_UPLOAD_BYTES_PER_DAY', 'UNSENT_FILE_TTL_SECONDS']) delete process.env[k];
  const c = withEnv({})();
  expect([c.limits.openUploadBytes, c.limits.uploadBytesPerDay, c.unsentFileTtlSeconds]).toEqual([10 * 100 * 1024 ** 2, 20 * 100 * 1024 ** 2, 86400]);
  expect(withEnv({ MAX_UPLOAD_BYTES: '1000' })().limits.openUploadBytes).toBe(10_000);
  expect(withEnv({ MAX_OPEN_UPLOAD_BYTES: '0', MAX_UPLOAD_BYTES_PER_DAY: '1000' })().limits).toMatchObject({ openUploadBytes: 0, uploadBytesPerDay: 1000 });
  expect(withEnv({ MAX_OPEN_UPLOAD_BYTES: '999' })).toThrow('MAX_OPEN_UPLOAD_BYTES must be 0 (off) or at least MAX_UPLOAD_BYTES (1000), room for one largest upload: 999');
});
