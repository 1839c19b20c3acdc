// Run as a child process (NODE_EXTRA_CA_CERTS is read at start-up only): two requests through the AWS calls'
// HTTP client to the URL given, printed as one JSON line; a failure prints its message.
import { http1 } from '../../lambdas/core/http1';

async function main(): Promise<void> {
  const url = new URL(process.argv[2]);
  try {
    const replies = [];
    for (const body of ['one', 'two']) {
      const r = await http1('POST', url, { host: url.host }, body, 5000);
      replies.push({ status: r.status, body: r.body.toString() });
    }
    console.log(JSON.stringify({ replies }));
  } catch (err) {
    console.log(JSON.stringify({ error: (err as Error).message }));
  }
}
void main();
