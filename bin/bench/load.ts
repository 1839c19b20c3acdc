// The throughput phase's load generator: autocannon in a second process, one user per connection.
// A second process so that it does not share the stack's thread; each connection acts as its own user (its own
// token and chat), as real clients would.
// Argument: JSON { url, method, body?, seconds, users: [{ token, path }] } (one connection per user).
// Prints autocannon's JSON summary.
import autocannon from 'autocannon';

interface LoadConfig {
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  seconds: number;
  users: { token: string; path: string }[];
}

const cfg = JSON.parse(process.argv[2]) as LoadConfig;
let next = 0;
autocannon(
  {
    url: cfg.url,
    connections: cfg.users.length,
    duration: cfg.seconds,
    requests: [
      {
        method: cfg.method,
        body: cfg.body,
        headers: { 'content-type': 'application/json' },
        setupRequest: (req, context) => {
          // autocannon keeps one context object per connection: its user.
          const c = context as { user?: LoadConfig['users'][number] };
          const user = (c.user ??= cfg.users[next++ % cfg.users.length]);
          return { ...req, path: user.path, headers: { ...req.headers, authorization: `Bearer ${user.token}` } };
        },
      },
    ],
  },
  (err, result) => {
    if (err) throw err;
    process.stdout.write(JSON.stringify(result) + '\n');
  },
);
