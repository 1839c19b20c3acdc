// The WebSocket API's @connections management API: posts a frame to one socket, or closes it.
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, GoneException, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { config, requireEnv } from '../shared/config';
import { clientOptions } from './options';

// The stage's callback URL (https://{api}.execute-api.{region}.amazonaws.com/{stage}); made on first use, as
// only the functions that post have it.
let client: ApiGatewayManagementApiClient | undefined;
const connections = () =>
  (client ??= new ApiGatewayManagementApiClient({ ...clientOptions(), endpoint: config().wsManagementEndpoint ?? requireEnv('WS_MANAGEMENT_ENDPOINT') }));

/** Posts the frame; false when the socket is gone (410). Throttling (429) and 5xx are retried by the SDK. */
export async function postToConnection(connectionId: string, frame: Uint8Array): Promise<boolean> {
  try {
    await connections().send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: frame }));
    return true;
  } catch (err) {
    if (err instanceof GoneException) return false;
    throw err;
  }
}

/** Closes the socket (its $disconnect follows); one already gone (410) is no error. */
export async function closeConnection(connectionId: string): Promise<void> {
  try {
    await connections().send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (err) {
    if (!(err instanceof GoneException)) throw err;
  }
}
