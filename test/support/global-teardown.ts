// Stops the run's local stack (SIGTERM, as Ctrl-C would) and removes its data folder and the synthesized shapes.
import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { LocalProcess } from './local-process';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__LOCAL_STACK__ as
    | { stack: LocalProcess; dataDir: string; synth: { dir: string; child: ChildProcess } }
    | undefined;
  if (!state) return;
  state.synth.child.kill(); // a run of a few test files may end before the synth does
  await state.stack.stop();
  rmSync(state.dataDir, { recursive: true, force: true });
  rmSync(state.synth.dir, { recursive: true, force: true });
}
