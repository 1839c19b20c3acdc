// Secrets Manager through Powertools Parameters: a secret's value cached per container for a bounded time,
// so a rotated secret is picked up within that time without a redeploy.
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { config } from '../shared/config';
import { clientOptions } from './options';

let provider: SecretsProvider | undefined;
const secrets = () =>
  (provider ??= new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({ ...clientOptions(), endpoint: config().secretsManagerEndpoint }) }));

/** The secret's string value, fetched again once it is older than `maxAgeSeconds`. */
export async function secretString(secretId: string, maxAgeSeconds: number): Promise<string> {
  const value = await secrets().get(secretId, { maxAge: maxAgeSeconds });
  if (typeof value !== 'string') throw new Error(`Secret ${secretId} has no string value`);
  return value;
}
