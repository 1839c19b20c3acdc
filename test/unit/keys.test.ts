// The items whose stream records become one chat's publications, in the order they were written: stream records
// are in order only within a partition (one shard), so all of them live in the user's partition.
import { keys } from '../../lambdas/entities/keys';

test("a chat's messages, its chat item (read actions) and its typing share the user's partition", () => {
  const [user, chat] = ['2b7e1c52-6a43-4c3e-9a55-0d3f6f3e2a11', '7d0f6a8e-3c1b-4f2e-8e6a-5b4c3d2e1f00'];
  const pk = keys.userPartition(user);
  expect(keys.message(user, chat, '01JABCDEF').pk).toBe(pk);
  expect(keys.chat(user, chat).pk).toBe(pk);
  expect(keys.typing(user, chat, 'bot').pk).toBe(pk);
  expect(keys.typing(user, chat, 'operator').pk).toBe(pk);
  // Never read as a chat or a message.
  for (const sender of ['bot', 'operator'] as const) {
    const { sk } = keys.typing(user, chat, sender);
    expect([sk.startsWith(keys.chatPrefix), sk.startsWith(keys.messagePrefix(chat))]).toEqual([false, false]);
  }
});
