// Inputs tests hand the domain directly; type-only imports, so a test that sets its environment before loading
// the service's modules can use them.
import type { NewMessage } from '../../lambdas/flows/send';
import type { Sender } from '../../lambdas/entities/messages';

/** A text message written straight through the domain (as the Bot API's handler writes a reply): the input. */
export const textMessage = (to: { userId: string; botId: string; chatId: string }, content: string, sender: Sender = 'bot'): NewMessage => ({
  ...to,
  content,
  content_type: 'text',
  files: [],
  sender,
});
