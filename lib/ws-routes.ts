// The WebSocket API's routes: CDK makes one Lambda + route per entry, the local WebSocket gateway serves the
// same entries. `dynamodb` lists exactly the IAM actions a handler uses, as in the HTTP route table (routes.ts).
import type { FunctionDef, Scoped } from './function-def';

export interface WsRouteDef extends FunctionDef, Scoped {
  routeKey: '$connect' | '$default' | '$disconnect';
  /** Replies to the client through the route response (no @connections call). */
  returnResponse?: boolean;
}

export const WS_ROUTES: WsRouteDef[] = [
  {
    id: 'ws_connect',
    scope: 'realtime:handshake',
    routeKey: '$connect',
    entry: 'lambdas/realtime/connect.ts',
    // GetItem: the user not erased; BatchWriteItem: the connection and the user's reference to it; Query: the
    // user's sockets (MAX_SOCKETS_PER_USER); DeleteItem: the records of a socket it closes; UpdateItem: that
    // socket's entry in its channel's stream.
    dynamodb: ['GetItem', 'BatchWriteItem', 'Query', 'DeleteItem', 'UpdateItem'],
    jwt: true,
    // The Disconnect push and DeleteConnection: the user's oldest sockets past the cap.
    closeConnections: true,
  },
  {
    id: 'ws_default',
    scope: 'realtime',
    routeKey: '$default',
    entry: 'lambdas/realtime/default.ts',
    // UpdateItem: the bind, a refresh, the socket's command counter and its entry in the channel's stream;
    // DeleteItem: an unsubscribe, and the records of a socket it closes; Query: the publications a subscribe
    // recovers (the replies of a frame with a subscribe go through the @connections API: closeConnections' POST).
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem', 'Query'],
    jwt: true,
    returnResponse: true,
    // The Disconnect push and DeleteConnection: a socket past its command budget.
    closeConnections: true,
  },
  {
    id: 'ws_disconnect',
    scope: 'connection',
    routeKey: '$disconnect',
    entry: 'lambdas/realtime/disconnect.ts',
    // The connection, its subscription and the user's reference to it (DeleteItem), and its entry in the
    // channel's stream (UpdateItem).
    dynamodb: ['DeleteItem', 'UpdateItem'],
  },
];
