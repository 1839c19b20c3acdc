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
    // user's sockets (MAX_SOCKETS_PER_USER); DeleteItem: the reference of a socket it closes.
    dynamodb: ['GetItem', 'BatchWriteItem', 'Query', 'DeleteItem'],
    jwt: true,
    // The Disconnect push and DeleteConnection: the user's oldest sockets past the cap.
    closeConnections: true,
  },
  {
    id: 'ws_default',
    scope: 'realtime',
    routeKey: '$default',
    entry: 'lambdas/realtime/default.ts',
    // UpdateItem: the bind, a refresh and the socket's command counter; DeleteItem: an unsubscribe, and the
    // records of a socket it closes.
    dynamodb: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'ConditionCheckItem'],
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
    // The connection, its subscription and the user's reference to it.
    dynamodb: ['DeleteItem'],
  },
];
