// Hand-written fast paths that must give exactly what the libraries they replace give: the item
// (un)marshalling (util-dynamodb's) and the JSON log lines (the Powertools logger's format).
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { marshallItem, unmarshallItem } from '../../lambdas/core/aws';

test('marshallItem gives what util-dynamodb gives (undefined values removed), and refuses what it refuses', () => {
  const options = { removeUndefinedValues: true };
  const doc = {
    s: 'text',
    empty: '',
    n: 42,
    float: -3.5,
    tiny: 1e-7,
    edge: Number.MAX_SAFE_INTEGER,
    yes: true,
    no: false,
    nothing: null,
    gone: undefined,
    fn: () => 1,
    map: { a: 'x', skip: undefined, nested: { l: ['y', null, undefined, 2, { deep: true }] } },
    list: [1, 'two', {}, []],
    strings: new Set(['a', 'b']),
    numbers: new Set([1, 2.5]),
    bytes: Buffer.from([0, 1, 2]),
    bare: Object.assign(Object.create(null), { k: 'v' }),
  };
  const ours = marshallItem(doc);
  expect(ours).toEqual(marshall(doc, options));
  expect(ours.map).toEqual({ M: { a: { S: 'x' }, nested: { M: { l: { L: [{ S: 'y' }, { NULL: true }, { N: '2' }, { M: { deep: { BOOL: true } } }] } } } } });
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, -(2 ** 60), new Date(0), new Set()]) {
    expect(() => marshall({ bad }, options)).toThrow();
    expect(() => marshallItem({ bad })).toThrow();
  }
});

test('unmarshallItem gives what util-dynamodb gives, for every attribute type', () => {
  const item = {
    s: { S: 'text' },
    empty: { S: '' },
    n: { N: '42' },
    negative: { N: '-3.5' },
    big: { N: '12345678901234567890' },
    edge: { N: String(Number.MAX_SAFE_INTEGER) },
    yes: { BOOL: true },
    no: { BOOL: false },
    nothing: { NULL: true },
    map: { M: { a: { S: 'x' }, nested: { M: { n: { N: '1' }, l: { L: [{ S: 'y' }, { NULL: true }] } } } } },
    list: { L: [{ N: '1' }, { S: 'two' }, { M: {} }, { L: [] }] },
    strings: { SS: ['a', 'b'] },
    numbers: { NS: ['1', '2.5'] },
    binary: { B: 'AAEC' },
    binaries: { BS: ['AAEC', 'AQ=='] },
  };
  const ours = unmarshallItem(item);
  expect(ours).toEqual(unmarshall(item as never));
  expect(ours.big).toBe(12345678901234567890n);
  expect(ours.strings).toEqual(new Set(['a', 'b']));
  expect(unmarshallItem({})).toEqual({});
  // A value with no type is refused as util-dynamodb refuses it.
  expect(() => unmarshallItem({ bad: {} })).toThrow(/No value defined/);
});

/** The lines `fn` writes to stdout and to stderr. */
function written(fn: () => void): { out: Record<string, any>[]; err: Record<string, any>[] } {
  const lines = { out: [] as string[], err: [] as string[] };
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((c) => (lines.out.push(String(c)), true));
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((c) => (lines.err.push(String(c)), true));
  try {
    fn();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const parse = (xs: string[]) => xs.map((x) => (expect(x.endsWith('\n')).toBe(true), JSON.parse(x)));
  return { out: parse(lines.out), err: parse(lines.err) };
}

/** The log module as a fresh cold start with these variables sees it. */
function logWith(env: Record<string, string | undefined>): typeof import('../../lambdas/core/log') {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
  try {
    let mod: typeof import('../../lambdas/core/log') | undefined;
    jest.isolateModules(() => (mod = require('../../lambdas/core/log')));
    return mod!;
  } finally {
    process.env = saved;
  }
}

test('log lines: the Powertools format, info to stdout, warnings and errors to stderr with the error formatted', () => {
  const { log } = logWith({ POWERTOOLS_LOG_LEVEL: undefined, AWS_LAMBDA_LOG_LEVEL: undefined, LOG_LEVEL: undefined, POWERTOOLS_SERVICE_NAME: 'svc' });
  const trace = process.env._X_AMZN_TRACE_ID;
  try {
    const { out, err } = written(() => {
      delete process.env._X_AMZN_TRACE_ID;
      log('info', 'request', { request_id: 'r1', status: 200 });
      process.env._X_AMZN_TRACE_ID = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
      log('warn', 'slow', { ms: 5 });
      const cause = new TypeError('inner');
      log('error', 'failed', { id: 'x' }, Object.assign(new Error('outer', { cause }), { code: 'E_X' }));
      log('error', 'thrown string', {}, 'plain');
    });
    expect(Object.keys(out[0])).toEqual(['level', 'message', 'timestamp', 'service', 'request_id', 'status']);
    expect(out[0]).toEqual({ level: 'INFO', message: 'request', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), service: 'svc', request_id: 'r1', status: 200 });
    expect(err[0]).toMatchObject({ level: 'WARN', message: 'slow', xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793', ms: 5 });
    expect(err[1]).toMatchObject({
      level: 'ERROR',
      id: 'x',
      error: {
        name: 'Error',
        message: 'outer',
        location: expect.stringMatching(/log-and-items\.test\.ts:\d+$/),
        stack: expect.stringContaining('Error: outer'),
        code: 'E_X',
        cause: { name: 'TypeError', message: 'inner', location: expect.stringMatching(/log-and-items\.test\.ts:\d+$/) },
      },
    });
    expect(err[2].error).toMatchObject({ name: 'Error', message: 'plain' });
  } finally {
    if (trace === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = trace;
  }
});

test('log level from the environment (Lambda log level first); a BigInt or a cycle does not cost the line', () => {
  const quiet = logWith({ POWERTOOLS_LOG_LEVEL: 'error', AWS_LAMBDA_LOG_LEVEL: undefined });
  expect(written(() => (quiet.log('info', 'no'), quiet.log('warn', 'no'), quiet.log('error', 'yes'))).err.map((l) => l.message)).toEqual(['yes']);
  const lambda = logWith({ POWERTOOLS_LOG_LEVEL: 'INFO', AWS_LAMBDA_LOG_LEVEL: 'WARN' });
  const lines = written(() => (lambda.log('info', 'no'), lambda.log('warn', 'yes')));
  expect([lines.out.length, lines.err.map((l) => l.message)]).toEqual([0, ['yes']]);

  const loose = logWith({ POWERTOOLS_LOG_LEVEL: 'DEBUG', AWS_LAMBDA_LOG_LEVEL: undefined });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const { out } = written(() => loose.log('info', 'odd values', { n: 10n, cyclic }));
  expect(out[0]).toMatchObject({ message: 'odd values', n: '10', cyclic: { a: 1, self: '[Circular]' } });
});
