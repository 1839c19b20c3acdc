// Phase 4: each function's bundle size and cold init (bundled as CDK bundles it, started in a fresh process).
// The process replays the event the function got earlier in the run; with --before, the code of another commit
// is bundled and cold-started too, interleaved.
import { mkdtempSync, rmSync, statSync, symlinkSync, existsSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { build, type Loader, type Metafile } from 'esbuild';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING } from '../../lib/bundling';
import { ownCodeGzipBytes } from '../../packages/client/build.mjs';
import { options, ROOT, FUNCTIONS } from './options';
import { median, round } from './stats';

/** The source tree of `ref` (lambdas/, lib/) extracted to a temporary folder, with this checkout's node_modules. */
export function checkoutBefore(ref: string): { ref: string; commit: string; dir: string } {
  const rev = spawnSync('git', ['-C', ROOT, 'rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' });
  if (rev.status !== 0) throw new Error(`--before ${ref}: not a commit of ${ROOT} (${rev.stderr.trim()})`);
  const commit = rev.stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'chat-bench-before-'));
  const paths = ['lambdas', 'lib', 'tsconfig.json', 'package.json'];
  // `git archive | tar -x`: nothing of the repository changes (no worktree, no index, no checkout).
  const archive = spawnSync('sh', ['-c', 'git -C "$1" archive "$2" -- $3 | tar -x -C "$4"', 'sh', ROOT, commit, paths.join(' '), dir], { encoding: 'utf8' });
  if (archive.status !== 0) throw new Error(`--before ${ref}: git archive failed (${archive.stderr.trim()})`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { ref, commit, dir };
}

interface Bundle {
  file: string;
  kb: number;
  mapKb: number;
  /** The largest parts of the bundle: npm package (or `own code`) → KB in the output, largest first. */
  parts: Record<string, number>;
}

/**
 * Each function bundled as CDK's NodejsFunction bundles it (lib/bundling.ts of the tree it comes from), into
 * `<outdir>/<id>/index.js`. One esbuild build with an entry point per function: without code splitting each
 * output is the bundle a build of its own makes, and the modules the functions share are parsed once.
 * Functions whose entry the tree lacks are left out.
 */
async function bundleAll(root: string, defs: { id: string; entry: string }[], bundling: BundlingOptions, outdir: string): Promise<Record<string, Bundle>> {
  const present = defs.filter((d) => existsSync(join(root, d.entry)));
  if (!present.length) return {};
  mkdirSync(outdir, { recursive: true });
  const { metafile } = await build({
    entryPoints: present.map((d) => ({ in: join(root, d.entry), out: join(d.id, 'index') })),
    outdir,
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format: 'cjs',
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    sourcesContent: bundling.sourcesContent,
    mainFields: bundling.mainFields,
    external: bundling.externalModules,
    define: bundling.define,
    loader: bundling.loader as Record<string, Loader> | undefined,
    keepNames: bundling.keepNames,
    banner: bundling.banner ? { js: bundling.banner } : undefined,
    footer: bundling.footer ? { js: bundling.footer } : undefined,
    metafile: true,
    logLevel: 'silent',
  });
  // The metafile names outputs relative to the working directory.
  const outputs = new Map(Object.entries(metafile.outputs).map(([path, output]) => [resolve(path), output]));
  return Object.fromEntries(
    present.map((d) => {
      const file = join(outdir, d.id, 'index.js');
      const bundle: Bundle = { file, kb: round(statSync(file).size / 1024), mapKb: existsSync(`${file}.map`) ? round(statSync(`${file}.map`).size / 1024) : 0, parts: composition(outputs.get(resolve(file))) };
      return [d.id, bundle];
    }),
  );
}

function composition(output: Metafile['outputs'][string] | undefined): Record<string, number> {
  const bytes = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const m = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = m ? m[1] : 'own code';
    bytes.set(key, (bytes.get(key) ?? 0) + bytesInOutput);
  }
  return Object.fromEntries(
    [...bytes]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([k, v]) => [k, round(v / 1024)]),
  );
}

/** What one cold start measured. */
interface ColdRun {
  /** Load + first event, ms. */
  ms: number;
  /** Of it, the module load. */
  load: number;
  status?: number;
  /** The reply carries a presigned S3 URL (no request, but the S3 client's signing). */
  presigned?: boolean;
  /** Requests that reached the Secrets Manager and S3 stand-ins during the run. */
  secrets: number;
  s3: number;
}

/**
 * The stand-ins a cold start talks to besides DynamoDB Local: Secrets Manager (GetSecretValue of the JWT secret,
 * as on AWS, where the signing key comes from it), and a pass-through to the S3 emulator. Both count requests,
 * which tells which functions touch either service on their first request.
 */
async function coldStartServices(jwtSecret: string) {
  const hits = { secrets: 0, s3: 0 };
  const secretArn = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench-jwt-AbCdEf';
  const secrets = createServer((req, res) => {
    hits.secrets++;
    req.resume();
    req.on('end', () => {
      const ok = req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue';
      res.writeHead(ok ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(
        JSON.stringify(
          ok
            ? { ARN: secretArn, Name: 'bench-jwt', SecretString: jwtSecret, VersionId: '00000000-0000-0000-0000-000000000001', VersionStages: ['AWSCURRENT'], CreatedDate: 1.7e9 }
            : { __type: 'UnknownOperationException', message: `not served here: ${String(req.headers['x-amz-target'])}` },
        ),
      );
    });
  });
  const s3Target = new URL(process.env.S3_ENDPOINT as string);
  const s3 = createServer((req, res) => {
    hits.s3++;
    // Headers as they came (the Host header is signed).
    const upstream = httpRequest({ host: s3Target.hostname, port: s3Target.port, method: req.method, path: req.url, headers: req.headers }, (reply) => {
      res.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const listen = (server: ReturnType<typeof createServer>) =>
    new Promise<string>((r) => server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}`)));
  const [secretsUrl, s3Url] = [await listen(secrets), await listen(s3)];
  const env = (sourceMaps: boolean): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, JWT_SECRET_ARN: secretArn, SECRETS_MANAGER_ENDPOINT: secretsUrl, S3_ENDPOINT: s3Url };
    delete e.JWT_SECRET_FILE;
    // As every function runs (NODE_OPTIONS in lib/stack.ts), or without, to tell what it costs.
    if (sourceMaps) e.NODE_OPTIONS = '--enable-source-maps';
    else delete e.NODE_OPTIONS;
    return e;
  };
  return {
    /**
     * A fresh Node process loads the bundle and handles `event`; its logs are dropped; a 5xx or a throw fails the
     * run. Without source maps only the load is wanted (what the map costs there), so the process ends after it.
     */
    async coldStart(id: string, file: string, event: unknown, sourceMaps: boolean): Promise<ColdRun> {
      const loaded = `process.stdout.write=()=>true;const t0=performance.now();const m=require(${JSON.stringify(file)});const load=performance.now()-t0;`;
      const script = sourceMaps
        ? loaded +
          `m.handler(${JSON.stringify(event)},{awsRequestId:'cold',getRemainingTimeInMillis:()=>60000}).then(r=>{const ms=performance.now()-t0;` +
          `process.stderr.write(JSON.stringify({ ms,load,status:r&&r.statusCode,presigned:/X-Amz-Signature=/.test(JSON.stringify(r)||'')})+'\\n');process.exit(0)})`
        : loaded + `process.stderr.write(JSON.stringify({ ms:load,load })+'\\n');process.exit(0)`;
      hits.secrets = 0;
      hits.s3 = 0;
      // Not spawnSync: the stack's gateways, queue and the stand-ins live in this process and must keep answering.
      const r = await run(process.execPath, ['-e', script], env(sourceMaps));
      const last = r.stderr.split('\n').find((l) => l.startsWith('{"ms"'));
      const line = (last ? JSON.parse(last) : {}) as Partial<ColdRun>;
      if (line.ms === undefined || line.load === undefined || (line.status ?? 200) >= 500) throw new Error(`cold init of ${id} (${file}): ${r.stderr}`);
      return { ms: line.ms, load: line.load, status: line.status, presigned: line.presigned, ...hits };
    },
    close: () => {
      secrets.close();
      s3.close();
    },
  };
}

/** Per function (in the order of FUNCTIONS); the `_before` figures and `before` only with --before. */
export interface ColdInitFigures {
  bundle_kb: Record<string, number>;
  source_map_kb: Record<string, number>;
  cold_init_ms: Record<string, number>;
  cold_load_ms: Record<string, number>;
  cold_load_no_source_maps_ms: Record<string, number>;
  first_request_touches: Record<string, string[]>;
  bundle_parts_kb: Record<string, Record<string, number>>;
  /** The client package's own code (packages/client, centrifuge excluded), minified and gzipped, as its build makes it. */
  client_package_gzip_kb: number;
  before?: { ref: string; commit: string };
  bundle_kb_before?: Record<string, number>;
  cold_init_ms_before?: Record<string, number>;
  cold_load_ms_before?: Record<string, number>;
}

/**
 * Phase 4. `firstEvents`: per function entry, the event to replay (from the round-trip phase); `before`: the
 * tree of --before (checkoutBefore).
 */
export async function bundlesAndColdInit(
  jwtSecret: string,
  before: { ref: string; commit: string; dir: string } | undefined,
  firstEvents: Map<string, unknown>,
): Promise<ColdInitFigures> {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-bundles-'));
  const beforeBundling: BundlingOptions | undefined = before ? ((await import(join(before.dir, 'lib', 'bundling.ts'))) as { BUNDLING: BundlingOptions }).BUNDLING : undefined;
  // Before any cold start is timed (sizes do not depend on when).
  const [now, old] = await Promise.all([
    bundleAll(ROOT, FUNCTIONS, BUNDLING, join(outdir, 'after')),
    before ? bundleAll(before.dir, FUNCTIONS, beforeBundling!, join(outdir, 'before')) : Promise.resolve({} as Record<string, Bundle>),
  ]);
  const services = await coldStartServices(jwtSecret);
  const runs = options.coldRuns;
  const cold: Record<string, number> = {};
  const load: Record<string, number> = {};
  const loadNoMaps: Record<string, number> = {};
  const coldBefore: Record<string, number> = {};
  const loadBefore: Record<string, number> = {};
  const touches: Record<string, string[]> = {};
  try {
    for (const def of FUNCTIONS) {
      const event = firstEvents.get(def.entry);
      if (event === undefined) throw new Error(`cold init of ${def.id}: the stack never invoked it, no event to replay`);
      const a: ColdRun[] = [];
      const plain: ColdRun[] = [];
      const b: ColdRun[] = [];
      // Interleaved, so that a slower minute of the machine weighs on each variant alike.
      for (let i = 0; i < runs; i++) {
        a.push(await services.coldStart(def.id, now[def.id].file, event, true));
        if (old[def.id]) b.push(await services.coldStart(`${def.id} (before)`, old[def.id].file, event, true));
        plain.push(await services.coldStart(def.id, now[def.id].file, event, false));
      }
      cold[def.id] = round(median(a.map((r) => r.ms)));
      load[def.id] = round(median(a.map((r) => r.load)));
      loadNoMaps[def.id] = round(median(plain.map((r) => r.load)));
      if (b.length) {
        coldBefore[def.id] = round(median(b.map((r) => r.ms)));
        loadBefore[def.id] = round(median(b.map((r) => r.load)));
      }
      touches[def.id] = [...(a.some((r) => r.secrets > 0) ? ['secretsmanager'] : []), ...(a.some((r) => r.s3 > 0 || r.presigned) ? ['s3'] : [])];
      if (process.env.BENCH_VERBOSE) console.error(`cold init ${def.id}: ${a.map((r) => round(r.ms)).join(', ')} ms; before ${b.map((r) => round(r.ms)).join(', ')}`);
    }
  } finally {
    services.close();
    rmSync(outdir, { recursive: true, force: true });
  }
  return {
    bundle_kb: Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].kb])),
    source_map_kb: Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].mapKb])),
    cold_init_ms: cold,
    cold_load_ms: load,
    cold_load_no_source_maps_ms: loadNoMaps,
    first_request_touches: touches,
    bundle_parts_kb: Object.fromEntries(FUNCTIONS.map((d) => [d.id, now[d.id].parts])),
    client_package_gzip_kb: round((await ownCodeGzipBytes()) / 1024),
    ...(before && {
      before: { ref: before.ref, commit: before.commit },
      bundle_kb_before: Object.fromEntries(Object.entries(old).map(([id, b]) => [id, b.kb])),
      cold_init_ms_before: coldBefore,
      cold_load_ms_before: loadBefore,
    }),
  };
}

/** A command's stderr once it exits (killed after 30 s). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ stderr: string }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', () => {
      clearTimeout(timer);
      resolve({ stderr });
    }),
  );
}
