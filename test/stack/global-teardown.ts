// The integration suite's teardown: says what the run created and where it stays, stops the local stack (if
// the suite started one) and removes the temporary folders.
import { rmSync } from 'node:fs';
import { quiet, type RunState } from './global-setup';
import { tally } from './target';

export async function finish(state: RunState): Promise<void> {
  const n = tally(state.ledger);
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;
  const made = `${plural(n.user, 'user')}, ${plural(n.chat, 'chat')}, ${plural(n.message, 'message')}, ${plural(n.file, 'file')}`;
  const secs = ((Date.now() - state.started) / 1000).toFixed(1);
  const total = n.user + n.chat + n.message + n.file;
  let where: string;
  if (state.local) {
    await state.local.stack.stop();
    rmSync(state.local.dataDir, { recursive: true, force: true });
    where = `in a temporary local stack, now stopped; its data folder ${state.local.dataDir} is removed, so nothing is left behind`;
  } else if (total === 0) {
    where = `in the stack at ${state.apiUrl}: nothing is left behind`;
  } else {
    where =
      `LEFT BEHIND in the stack at ${state.apiUrl} (the API has no delete): users with external_id ${state.prefix}*, ` +
      `their chats, messages and files (the Bot API's GET /api/bot/chats lists them with user.external_id)`;
  }
  rmSync(state.runDir, { recursive: true, force: true });
  if (!quiet()) console.log(`\n[integration] run ${state.prefix} (${secs} s) created ${total === 0 ? 'nothing' : made} ${where}.\n`);
}

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as Record<string, unknown>).__INTEGRATION__ as RunState | undefined;
  if (state) await finish(state);
}
