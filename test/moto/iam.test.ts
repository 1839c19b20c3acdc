// The IAM tier: every function's handler runs against moto (an independent model of AWS) with only the keys
// of a user holding that function's role policy as synthesized. Every AWS call must be accepted: signed
// correctly, allowed by the policy, valid. And the policies are no wider than needed: without any one of the
// actions routes.ts grants, the function's flow is refused.
import { Harness, describeCall, iamActionOf } from './harness';
import { Flows, FLOW_ORDER } from './user-flows';
import { ALL_DEFS, routeActions } from './template';
import { present } from '../support/contract';

const hx = new Harness();
let flows: Flows;
// Quiet: the handlers' logs (a refused call is reported by the recorder, with moto's message).
let quiet: jest.SpyInstance[] = [];

beforeAll(async () => {
  await hx.start();
  flows = new Flows(hx);
  await flows.bots();
}, 90_000);

afterAll(async () => {
  flows?.destroy();
  await hx.stop();
});

beforeEach(() => {
  quiet = [jest.spyOn(process.stdout, 'write').mockImplementation(() => true), jest.spyOn(console, 'log').mockImplementation(() => undefined)];
});
afterEach(() => quiet.forEach((s) => s.mockRestore()));

const FLOWS = FLOW_ORDER.filter((id) => ALL_DEFS.some((d) => d.id === id));

test('every function has a flow', () => {
  expect(ALL_DEFS.map((d) => d.id).filter((id) => !(FLOW_ORDER as readonly string[]).includes(id))).toEqual([]);
});

describe('every call of every flow is accepted by moto with the function\'s own policy', () => {
  for (const id of FLOWS) {
    test(id, async () => {
      const from = hx.rec.calls.length;
      let failure: Error | undefined;
      try {
        await flows[id]();
      } catch (err) {
        failure = err as Error;
      }
      const refused = hx.refusals(from).map(describeCall);
      expect({ id, refused }).toEqual({ id, refused: [] });
      if (failure) throw failure;
      const own = hx.rec.calls.slice(from).filter((c) => c.caller === id);
      if (id !== 'not_found') expect(own.length).toBeGreaterThan(0);
    });
  }
});

/** Actions a role holds for Lambda itself, not for the handler: logs, the stream and queue event sources. */
const FOR_LAMBDA = /^(logs:|xray:|dynamodb:(DescribeStream|GetRecords|GetShardIterator|ListStreams)$|sqs:(ReceiveMessage|DeleteMessage|ChangeMessageVisibility|GetQueueAttributes|GetQueueUrl)$)/;

test('every action a role holds for its handler is one the handler called (least privilege both ways)', () => {
  const called = new Map<string, Set<string>>();
  for (const c of hx.rec.calls) {
    const set = called.get(c.caller) ?? new Set<string>();
    set.add(iamActionOf(c));
    c.itemActions?.forEach((a) => set.add(a));
    called.set(c.caller, set);
  }
  const unused: Record<string, string[]> = {};
  for (const [id, fn] of Object.entries(hx.stack.functions)) {
    const held = new Set<string>();
    for (const st of fn.statements) {
      const resources = JSON.stringify(st.Resource);
      for (const a of [st.Action].flat()) {
        // The on-failure destinations of the stream consumers and of S3's asynchronous invocations (their
        // dead-letter queues) are written by Lambda.
        if (FOR_LAMBDA.test(a) || (/^sqs:/.test(a) && /(Publisher|WebhookDispatcher|UploadCompleter)Dlq/.test(resources))) continue;
        held.add(a);
      }
    }
    const never = [...held].filter((a) => !called.get(id)?.has(a)).sort();
    if (never.length) unused[id] = never;
  }
  expect(unused).toEqual({});
});

test('a call signed with the wrong secret is refused (moto verifies SigV4)', async () => {
  const h = hx.load('list_chats');
  h.env = { ...h.env, AWS_SECRET_ACCESS_KEY: `${h.env.AWS_SECRET_ACCESS_KEY}x` };
  flows.override = h;
  const from = hx.rec.calls.length;
  try {
    await expect(flows.list_chats()).rejects.toThrow(/expected 200, got 5\d\d/);
  } finally {
    flows.override = undefined;
  }
  const refused = hx.refusals(from).filter((c) => c.caller === 'list_chats');
  expect(refused.map((c) => c.errorType)).toContainEqual(expect.stringMatching(/^(SignatureDoesNotMatch|InvalidSignatureException)$/));
});

test('a presigned URL altered after signing is refused (the pass-through verifies its signature)', async () => {
  const fileUrl = present(present(flows.ctx.file, "upload_file's file").url, 'its url');
  const url = new URL(fileUrl);
  const sig = url.searchParams.get('X-Amz-Signature')!;
  url.searchParams.set('X-Amz-Signature', `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`);
  expect((await fetch(url)).status).toBe(403);
  const other = new URL(fileUrl);
  other.pathname = `${other.pathname}x`;
  const res = await fetch(other);
  expect(res.status).toBe(403);
  expect(await res.text()).toContain('SignatureDoesNotMatch');
  expect((await fetch(fileUrl)).status).toBe(200);
});

describe('least privilege: without any one action routes.ts grants, the function\'s flow is refused that action', () => {
  for (const def of ALL_DEFS) {
    for (const action of routeActions(def)) {
      test(`${def.id} without ${action}`, async () => {
        // Holds and redo queues are read by the stream consumers' runs alone.
        if ('filters' in def) await flows.clearStreamHolds();
        await hx.beginRun();
        await hx.setPolicy(def.id, action);
        flows.override = hx.load(def.id);
        const from = hx.rec.calls.length;
        const refusedHere = () => hx.refusals(from).filter((c) => c.caller === def.id && iamActionOf(c) === action.split('@')[0] && /AccessDenied/.test(c.errorType ?? ''));
        hx.stopOnceRefused = { id: def.id, refused: () => refusedHere().length > 0 };
        let stopped = 'it ran to its end';
        try {
          await flows[def.id as (typeof FLOW_ORDER)[number]]();
        } catch (err) {
          stopped = `it stopped at: ${(err as Error).message}`; // expected: the refusal below; shown when none came
        } finally {
          flows.override = undefined;
          hx.stopOnceRefused = undefined;
          await hx.setPolicy(def.id);
        }
        const refused = refusedHere();
        const others = hx.refusals(from).filter((c) => c.caller !== def.id).map(describeCall);
        expect({ others, refused: refused.length > 0 ? 'refused' : `no call of ${def.id} needed ${action} (${stopped})` }).toEqual({ others: [], refused: 'refused' });
      });
    }
  }
});
