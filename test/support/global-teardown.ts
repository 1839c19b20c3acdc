// Stops the run's local stack (SIGTERM, as Ctrl-C would) and removes its data folder.
import { rmSync } from 'node:fs';
import type { LocalProcess } from './local-process';

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__LOCAL_STACK__ as { stack: LocalProcess; dataDir: string } | undefined;
  if (!state) return;
  await state.stack.stop();
  rmSync(state.dataDir, { recursive: true, force: true });
}
